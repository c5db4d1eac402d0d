#include "bench/bench_database.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>

#include "bench/bench_support.h"
#include "envelope_codec.h"

namespace room_outbox::bench {
namespace {

constexpr size_t kRowsPerInsert = 1000;

std::vector<std::filesystem::path> SchemaFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ROOM_OUTBOX_SCHEMA_DIR)) {
    if (entry.path().extension() == ".sql") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw BenchFailure("cannot read " + path.string());
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string RoomId(size_t room) { return "room-" + std::to_string(room); }

}  // namespace

const std::vector<std::string> kBenchEventTypes = {"RoomUserJoined", "RoomGiftSent",
                                                   "RoomUserLeft"};

BenchDatabase::BenchDatabase(const std::string& socket, std::string name)
    : socket_(socket), name_(std::move(name)), conn_(mysql_init(nullptr)) {
  if (!conn_) {
    throw BenchFailure("mysql_init failed");
  }
  if (mysql_real_connect(conn_.get(), nullptr, "root", nullptr, nullptr, 0, socket_.c_str(),
                         CLIENT_MULTI_STATEMENTS) == nullptr) {
    throw BenchFailure("cannot connect to MariaDB at " + socket_ + ": " + mysql_error(conn_.get()));
  }
  Exec("DROP DATABASE IF EXISTS `" + name_ + "`");
  Exec("CREATE DATABASE `" + name_ + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
  Exec("USE `" + name_ + "`");
  for (const auto& file : SchemaFiles()) {
    Exec(ReadFile(file));
  }
}

BenchDatabase::~BenchDatabase() {
  const std::string drop = "DROP DATABASE IF EXISTS `" + name_ + "`";
  // Best effort: a leftover schema is dropped by the next run of the same benchmark.
  (void)mysql_query(conn_.get(), drop.c_str());
}

MysqlOptions BenchDatabase::Options() const {
  MysqlOptions options;
  options.socket = socket_;
  options.user = "root";
  options.password = "";
  options.database = name_;
  return options;
}

std::vector<BenchDatabase::Row> BenchDatabase::Query(const std::string& sql) {
  if (mysql_real_query(conn_.get(), sql.data(), sql.size()) != 0) {
    throw BenchFailure("query failed: " + sql.substr(0, 200) + ": " + mysql_error(conn_.get()));
  }
  std::vector<Row> rows;
  // Multi-statement text (schema files) gives several results; keep the rows of all of them.
  while (true) {
    MysqlResPtr res(mysql_store_result(conn_.get()));
    if (res) {
      const unsigned int fields = mysql_num_fields(res.get());
      while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
        const unsigned long* lengths = mysql_fetch_lengths(res.get());
        Row out;
        for (unsigned int i = 0; i < fields; ++i) {
          out.push_back(row[i] == nullptr ? "NULL" : std::string(row[i], lengths[i]));
        }
        rows.push_back(std::move(out));
      }
    } else if (mysql_field_count(conn_.get()) != 0) {
      throw BenchFailure("reading the result of " + sql.substr(0, 200) + ": " +
                         mysql_error(conn_.get()));
    }
    const int next = mysql_next_result(conn_.get());
    if (next > 0) {
      throw BenchFailure("query failed: " + sql.substr(0, 200) + ": " + mysql_error(conn_.get()));
    }
    if (next < 0) {
      break;
    }
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
  std::vector<int64_t> room_seq(fill.rooms, 0);
  std::string sql;
  size_t in_statement = 0;
  auto flush = [&] {
    if (in_statement > 0) {
      db.Exec(sql);
      in_statement = 0;
    }
  };
  for (size_t n = 0; n < fill.rows; ++n) {
    const size_t room = static_cast<size_t>(random() % fill.rooms);
    const std::string event_type = kBenchEventTypes[n % kBenchEventTypes.size()];
    Envelope envelope;
    envelope.event_id = fill.id_prefix + "-e" + std::to_string(n);
    envelope.event_type = event_type;
    envelope.room_id = RoomId(room);
    envelope.room_seq = ++room_seq[room];
    envelope.command_id = fill.id_prefix + "-c" + std::to_string(n);
    envelope.request_id = "req-" + std::to_string(n);
    envelope.node_id = "bench-node";
    envelope.occurred_at_ms = fill.created_at_ms;
    envelope.payload = R"({"user_id":"u-)" + std::to_string(n) + R"(","amount":1})";
    const std::string json = Unwrap(EncodeEnvelope(envelope), "EncodeEnvelope");
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

}  // namespace room_outbox::bench
