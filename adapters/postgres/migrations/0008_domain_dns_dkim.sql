-- Domains get what the workspace Domains API needs: the ownership token and DKIM selector
-- (fixed at creation), the DKIM key pair (made when first needed; the private key is the
-- base64 of its PKCS#1 DER), whether the operator vouched for the domain, and the last DNS
-- checks (JSON). Domains that exist were all verified by the operator.
ALTER TABLE domains
    ADD COLUMN verification_token   text NOT NULL DEFAULT '',
    ADD COLUMN dkim_selector        text NOT NULL DEFAULT '',
    ADD COLUMN dkim_private_key     text,
    ADD COLUMN dkim_public_key      text,
    ADD COLUMN verified_by_operator boolean NOT NULL DEFAULT false,
    ADD COLUMN checks               jsonb NOT NULL DEFAULT '{}';

UPDATE domains SET
    verification_token = 'posthorn-verification=' || md5(random()::text || id),
    dkim_selector = 'ph' || substr(md5(random()::text || id || 'selector'), 1, 8),
    verified_by_operator = verified;

ALTER TABLE domains
    ALTER COLUMN verification_token DROP DEFAULT,
    ALTER COLUMN dkim_selector DROP DEFAULT;

-- A domain name receives inbound mail in one workspace only.
CREATE UNIQUE INDEX domains_inbound_name ON domains (domain) WHERE inbound_enabled;
