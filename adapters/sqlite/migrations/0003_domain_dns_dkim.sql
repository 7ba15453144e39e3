-- Domains get what the workspace Domains API needs: the ownership token and DKIM selector
-- (fixed at creation), the DKIM key pair (made when first needed; the private key is the
-- base64 of its PKCS#1 DER), whether the operator vouched for the domain, and the last DNS
-- checks (JSON). Domains that exist were all verified by the operator.
ALTER TABLE domains ADD COLUMN verification_token TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN dkim_selector TEXT NOT NULL DEFAULT '';
ALTER TABLE domains ADD COLUMN dkim_private_key TEXT;
ALTER TABLE domains ADD COLUMN dkim_public_key TEXT;
ALTER TABLE domains ADD COLUMN verified_by_operator INTEGER NOT NULL DEFAULT 0;
ALTER TABLE domains ADD COLUMN checks TEXT NOT NULL DEFAULT '{}';

UPDATE domains SET
    verification_token = 'posthorn-verification=' || lower(hex(randomblob(16))),
    dkim_selector = 'ph' || lower(hex(randomblob(4))),
    verified_by_operator = verified;

-- A domain name receives inbound mail in one workspace only.
CREATE UNIQUE INDEX domains_inbound_name ON domains (domain) WHERE inbound_enabled = 1;
