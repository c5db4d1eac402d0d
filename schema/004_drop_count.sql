-- Definite drops (issue 8, TENCENT_IM.md §9.3).
--   drop_count  how many times IM answered OK + MsgDropReason for the row (a definite
--               non-delivery, e.g. the group's 40 msg/s frequency control). The relay sends the
--               row with Random = RandomForRow(id, drop_count), so a resend after a drop gets a new
--               Random (IM cannot swallow it as a duplicate of the dropped message) while a resend
--               after an unknown outcome keeps it (IM can dedupe it). MarkFailed adds 1 for a
--               dropped attempt; nothing else changes it.
-- Idempotent: the statement may run again on a database that already has it.
ALTER TABLE room_outbox ADD COLUMN IF NOT EXISTS drop_count INT UNSIGNED NOT NULL DEFAULT 0
  AFTER retry_count;
