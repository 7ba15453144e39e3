-- A tracked segment announces entries and exits only once the quiet first snapshot of its
-- members is complete (`Write::SegmentSynced`): `tracking_since` is when tracking was last
-- switched on, `members_synced_for` the `tracking_since` whose snapshot is complete (both in
-- microseconds since the epoch). Segments tracked before this migration have been synced for
-- a while: mark them so.
ALTER TABLE segments ADD COLUMN tracking_since INTEGER;
ALTER TABLE segments ADD COLUMN members_synced_for INTEGER;
UPDATE segments SET tracking_since = created_at, members_synced_for = created_at
    WHERE track_membership;
