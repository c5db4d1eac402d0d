-- The app's IM request budget, shared by every process that sends to the app.
--   app_key    the IM app the member sends to: "<endpoint> <sdk_app_id>".
--   member_id  one sending process: "<host>:<pid>:<random>".
--   beat_ms    the member's last heartbeat (database server clock). A member whose beat is older
--              than two beat intervals is no longer counted; rows a minute old are deleted.
--   demand     requests per second the member wanted over its last beat (it sent them, or it
--              waited for tokens: then the most it may take).
--   share      requests per second the member takes now (rounded up): a member never takes more
--              than the limit minus the shares of the others, so a newcomer waits for them.
-- Each member re-reads the live members of its app every beat and takes its share of
-- [tencent_im] app_requests_per_second by demand (core/app_budget/share_split.h).
CREATE TABLE IF NOT EXISTS room_outbox_im_member (
  app_key   VARCHAR(255) NOT NULL,
  member_id VARCHAR(191) NOT NULL,
  beat_ms   BIGINT       NOT NULL,
  demand    INT UNSIGNED NOT NULL DEFAULT 0,
  share     INT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (app_key, member_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO room_outbox_schema_version (version, name, applied_at_ms)
  VALUES (5, '005_im_budget_members', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED))
  ON DUPLICATE KEY UPDATE version = version;
