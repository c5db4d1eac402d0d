// PreparedStatement: one server-side prepared statement on a MariaDbConnection.
//
//   auto st = PreparedStatement::Prepare(mysql, "claim_due", "SELECT ... WHERE a=? LIMIT ?");
//   st->Execute(params)   binds (checking the placeholder count), executes, and buffers the
//                         whole result set client-side so the connection is free again;
//   st->Fetch()           returns the buffered rows one by one, nullopt at the end.
//   st->ExecuteRefs(refs) the same with parameters that refer to their values (no copies);
//   st->Next(), IntAt(i), TextAt(i)  step through the buffered rows without copying them.
//
// Values travel as SqlValue both ways: NULL, int64 (every integer column), double (FLOAT,
// DOUBLE) or string (everything else, any length: MEDIUMTEXT values of megabytes are read in
// full).
//
// Not thread-safe; lives no longer than the connection that prepared it.
#pragma once

#include <mysql.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/mysql/mysql_handles.h"
#include "core/result.h"

namespace room_outbox::core {

// A value bound to or read from a statement: NULL, an integer, a double or a string. The same
// type as the public room_outbox::SqlValue (hook.h), so a caller statement's parameters bind
// without a copy.
using SqlValue = std::variant<std::monostate, int64_t, double, std::string>;

// One fetched row with checked accessors.
class ResultRow {
 public:
  explicit ResultRow(std::vector<SqlValue> cells) : cells_(std::move(cells)) {}
  size_t size() const { return cells_.size(); }
  bool IsNull(size_t i) const;
  // The integer in column i; a NULL reads as 0 and a numeric text is parsed.
  [[nodiscard]] Result<int64_t> Int(size_t i) const;
  // The text in column i; a NULL reads as "", a number is formatted.
  std::string Str(size_t i) const;
  // Moves the string out of column i (for large values); empty when it is not a string.
  std::string TakeStr(size_t i);
  const SqlValue& cell(size_t i) const { return cells_.at(i); }

 private:
  std::vector<SqlValue> cells_;
};

// A parameter that refers to its value: NULL, an integer, a double or a string the caller
// keeps alive until the Execute returns.
using SqlRef = std::variant<std::monostate, int64_t, double, std::string_view>;

class PreparedStatement {
 public:
  // Prepares `sql` on `mysql`; `name` identifies it in error messages.
  [[nodiscard]] static Result<std::unique_ptr<PreparedStatement>> Prepare(MYSQL* mysql,
                                                                          std::string name,
                                                                          std::string_view sql);

  PreparedStatement(const PreparedStatement&) = delete;
  PreparedStatement& operator=(const PreparedStatement&) = delete;

  const std::string& name() const { return name_; }
  unsigned long param_count() const;

  // Binds `params` (exactly one per placeholder) and executes. A result set is buffered in full;
  // read it with Fetch/FetchAll before the next Execute.
  [[nodiscard]] Result<void> Execute(std::span<const SqlValue> params);
  [[nodiscard]] Result<void> ExecuteRefs(std::span<const SqlRef> params);
  // The next buffered row, or nullopt after the last.
  [[nodiscard]] Result<std::optional<ResultRow>> Fetch();
  // Every remaining buffered row.
  [[nodiscard]] Result<std::vector<ResultRow>> FetchAll();

  // Steps to the next buffered row: false after the last. Its columns are read in place with
  // IntAt/TextAt, valid until the next step.
  [[nodiscard]] Result<bool> Next();
  // Column i of the current row: an integer column (NULL reads as 0).
  [[nodiscard]] Result<int64_t> IntAt(size_t i) const;
  // Column i of the current row: a text column (NULL reads as ""). Fails for a value longer
  // than the column's buffer (1024 bytes at first); read such values with Fetch.
  [[nodiscard]] Result<std::string_view> TextAt(size_t i) const;

  // Rows matched by the last UPDATE/DELETE (the connection uses CLIENT_FOUND_ROWS) or inserted.
  uint64_t AffectedRows() const;
  // The AUTO_INCREMENT id of the last INSERT.
  uint64_t InsertId() const;

 private:
  PreparedStatement(MysqlStmtPtr stmt, std::string name)
      : stmt_(std::move(stmt)), name_(std::move(name)) {}

  Error StmtError(std::string_view call) const;
  // Checks the count, binds `params` and executes.
  template <class Value>
  [[nodiscard]] Result<void> BindAndExecute(std::span<const Value> params);
  [[nodiscard]] Result<void> BindResult();
  [[nodiscard]] Result<void> FreeResult();

  // The output buffers of one column; kept per statement so each Fetch reuses them.
  struct Column {
    enum class Kind { kInt, kDouble, kString } kind = Kind::kString;
    int64_t int_value = 0;
    double double_value = 0;
    std::vector<char> text;
    unsigned long length = 0;
    my_bool is_null = 0;
    my_bool error = 0;
  };

  // Column i of the row Next stepped to, when it is of `kind`.
  [[nodiscard]] Result<const Column*> CurrentColumn(size_t i, Column::Kind kind) const;

  MysqlStmtPtr stmt_;
  std::string name_;
  bool has_result_ = false;
  bool on_row_ = false;  // Next stepped to a row
  std::vector<MYSQL_BIND> param_binds_;
  std::vector<MYSQL_BIND> result_binds_;
  std::vector<Column> columns_;
};

}  // namespace room_outbox::core
