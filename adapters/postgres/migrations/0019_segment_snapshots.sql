-- A tracked segment announces entries and exits only once the quiet first snapshot of its
-- members is complete (`Write::SegmentSynced`): `tracking_since` is when tracking was last
-- switched on, `members_synced_for` the `tracking_since` whose snapshot is complete.
-- Segments tracked before this migration have been synced for a while: mark them so.
ALTER TABLE segments ADD COLUMN tracking_since timestamptz;
ALTER TABLE segments ADD COLUMN members_synced_for timestamptz;
UPDATE segments SET tracking_since = created_at, members_synced_for = created_at
    WHERE track_membership;
