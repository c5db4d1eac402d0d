#include "bench/bench_database.h"

#include <random>
#include <utility>

#include "bench/bench_support.h"
#include "core/envelope_codec.h"
#include "support/mysql_admin.h"

namespace room_outbox::bench {

namespace {

constexpr size_t kRowsPerInsert = 1000;

std::string RoomId(size_t room) { return "room-" + std::to_string(room); }

}  // namespace

const char kBusyRoomId[] = "room-busy";

const std::vector<std::string> kBenchEventTypes = {"RoomUserJoined", "RoomGiftSent",
                                                   "RoomUserLeft"};

BenchDatabase::BenchDatabase(const std::string& socket, std::string name)
    : socket_(socket), name_(std::move(name)) {
  std::string error;
  conn_ = testing::ConnectAsRoot(socket_, error);
  if (!conn_) {
    throw BenchFailure(error);
  }
  Exec("DROP DATABASE IF EXISTS `" + name_ + "`");
  error = testing::CreateSchemaDatabase(conn_.get(), socket_, name_);
  if (!error.empty()) {
    throw BenchFailure(error);
  }
}

BenchDatabase::~BenchDatabase() {
  const std::string drop = "DROP DATABASE IF EXISTS `" + name_ + "`";
  // Best effort: a leftover schema is dropped by the next run of the same benchmark.
  (void)mysql_query(conn_.get(), drop.c_str());
}

MysqlOptions BenchDatabase::Options() const { return testing::RootOptions(socket_, name_); }

std::vector<BenchDatabase::Row> BenchDatabase::Query(const std::string& sql) {
  std::vector<testing::SqlRow> result;
  // Error messages quote the start of the statement only: fill INSERTs run to megabytes.
  const std::string error = testing::RunSql(conn_.get(), sql, result, 200);
  if (!error.empty()) {
    throw BenchFailure(error);
  }
  std::vector<Row> rows;
  rows.reserve(result.size());
  for (auto& row : result) {
    Row out;
    out.reserve(row.size());
    for (auto& field : row) {
      out.push_back(field ? std::move(*field) : "NULL");
    }
    rows.push_back(std::move(out));
  }
  return rows;
}

int64_t BenchDatabase::Scalar(const std::string& sql) {
  auto rows = Query(sql);
  if (rows.empty() || rows[0].empty() || rows[0][0] == "NULL") {
    return 0;
  }
  return std::stoll(rows[0][0]);
}

std::string BenchDatabase::Quote(const std::string& text) {
  std::string out(text.size() * 2 + 1, '\0');
  const unsigned long n =
      mysql_real_escape_string(conn_.get(), out.data(), text.data(), text.size());
  out.resize(n);
  return "'" + out + "'";
}

double InsertPendingRows(BenchDatabase& db, const OutboxFill& fill) {
  Stopwatch watch;
  std::mt19937_64 random(fill.seed);
  std::vector<int64_t> room_seq(fill.rooms + 1, 0);  // the last one counts the busy room
  std::string sql;
  size_t in_statement = 0;
  auto flush = [&] {
    if (in_statement > 0) {
      db.Exec(sql);
      in_statement = 0;
    }
  };
  for (size_t n = 0; n < fill.rows; ++n) {
    const bool busy = fill.busy_every > 0 && n % fill.busy_every == 0;
    const size_t room = busy ? fill.rooms : static_cast<size_t>(random() % fill.rooms);
    const std::string event_type = kBenchEventTypes[n % kBenchEventTypes.size()];
    Envelope envelope;
    envelope.event_id = fill.id_prefix + "-e" + std::to_string(n);
    envelope.event_type = event_type;
    envelope.room_id = busy ? kBusyRoomId : RoomId(room);
    envelope.room_seq = ++room_seq[room];
    envelope.command_id = fill.id_prefix + "-c" + std::to_string(n);
    envelope.request_id = "req-" + std::to_string(n);
    envelope.node_id = "bench-node";
    envelope.occurred_at_ms = fill.created_at_ms;
    envelope.payload = R"({"user_id":"u-)" + std::to_string(n) + R"(","amount":1})";
    const std::string json = Unwrap(core::EncodeEnvelope(envelope), "EncodeEnvelope");
    if (in_statement == 0) {
      sql =
          "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
          "envelope, status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, "
          "updated_at_ms) VALUES ";
    } else {
      sql += ", ";
    }
    const std::string created = std::to_string(fill.created_at_ms);
    sql += "(" + db.Quote(envelope.event_id) + ", " + db.Quote(event_type) + ", " +
           db.Quote(envelope.room_id) + ", " + db.Quote(envelope.command_id) + ", " +
           db.Quote(envelope.request_id) + ", " + db.Quote(json) + ", 'pending', 0, 0, NULL, " +
           created + ", " + created + ")";
    if (++in_statement == kRowsPerInsert) {
      flush();
    }
  }
  flush();
  return watch.Seconds();
}

double InsertPublishedRowsFromSequence(BenchDatabase& db, size_t rows, size_t rooms,
                                       int64_t created_at_ms) {
  Stopwatch watch;
  const std::string created = std::to_string(created_at_ms);
  const std::string room = "CONCAT('room-', s.seq % " + std::to_string(rooms) + ")";
  const std::string event_id = "CONCAT('old-e', LPAD(s.seq, 8, '0'))";
  const std::string command_id = "CONCAT('old-c', LPAD(s.seq, 8, '0'))";
  db.Exec(
      "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, envelope, "
      "status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, updated_at_ms, "
      "published_at_ms) SELECT " +
      event_id + ", 'RoomGiftSent', " + room + ", " + command_id +
      ", CONCAT('req-', s.seq), JSON_OBJECT('event_id', " + event_id +
      ", 'event_type', 'RoomGiftSent', 'room_id', " + room + ", 'room_seq', s.seq, 'command_id', " +
      command_id + ", 'request_id', CONCAT('req-', s.seq), 'node_id', 'bench-node', " +
      "'occurred_at_ms', " + created + ", 'payload', JSON_OBJECT('user_id', CONCAT('u-', s.seq), " +
      "'amount', 1)), 'published', 0, " + created + ", NULL, " + created + ", " + created + ", " +
      created + " FROM seq_1_to_" + std::to_string(rows) + " s");
  return watch.Seconds();
}

double InsertRoomBacklog(BenchDatabase& db, size_t rooms, size_t events_per_room,
                         int64_t created_at_ms) {
  Stopwatch watch;
  const std::string created = std::to_string(created_at_ms);
  const std::string room = "CONCAT('room-', s.seq)";
  for (size_t k = 0; k < events_per_room; ++k) {
    const std::string n = std::to_string(k);
    const std::string event_id = "CONCAT('out-e', s.seq, '-', " + n + ")";
    const std::string command_id = "CONCAT('out-c', s.seq, '-', " + n + ")";
    db.Exec(
        "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
        "envelope, status, retry_count, next_attempt_at_ms, claim_token, created_at_ms, "
        "updated_at_ms) SELECT " +
        event_id + ", 'RoomGiftSent', " + room + ", " + command_id + ", 'req-out', JSON_OBJECT(" +
        "'event_id', " + event_id + ", 'event_type', 'RoomGiftSent', 'room_id', " + room +
        ", 'room_seq', " + std::to_string(k + 1) + ", 'command_id', " + command_id +
        ", 'request_id', 'req-out', 'node_id', 'bench-node', 'occurred_at_ms', " + created +
        ", 'payload', JSON_OBJECT('gift', 'rose', 'amount', 1)), 'pending', 0, 0, NULL, " +
        created + ", " + created + " FROM seq_0_to_" + std::to_string(rooms - 1) + " s");
  }
  return watch.Seconds();
}

}  // namespace room_outbox::bench
