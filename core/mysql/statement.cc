#include "core/mysql/statement.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <type_traits>

#include "core/mysql/mysql_error.h"
#include "core/mysql/statement_count.h"

namespace room_outbox::core {
namespace {

// Most values (ids, types, room ids, short envelopes) fit at once; longer ones are read with
// mysql_stmt_fetch_column after the row reports their full length.
constexpr size_t kInitialTextBuffer = 1024;

bool IsIntegerType(enum_field_types type) {
  switch (type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_YEAR:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool ResultRow::IsNull(size_t i) const {
  return std::holds_alternative<std::monostate>(cells_.at(i));
}

Result<int64_t> ResultRow::Int(size_t i) const {
  const SqlValue& v = cells_.at(i);
  if (const auto* n = std::get_if<int64_t>(&v)) {
    return *n;
  }
  if (std::holds_alternative<std::monostate>(v)) {
    return 0;
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    int64_t out = 0;
    auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), out);
    if (ec == std::errc() && end == s->data() + s->size()) {
      return out;
    }
  }
  return Fail(ErrorCode::kInternal,
              "column " + std::to_string(i) + " does not hold an integer: " + Str(i));
}

std::string ResultRow::Str(size_t i) const {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else {
          return std::to_string(v);
        }
      },
      cells_.at(i));
}

std::string ResultRow::TakeStr(size_t i) {
  if (auto* s = std::get_if<std::string>(&cells_.at(i))) {
    return std::move(*s);
  }
  return Str(i);
}

Result<std::unique_ptr<PreparedStatement>> PreparedStatement::Prepare(MYSQL* mysql,
                                                                      std::string name,
                                                                      std::string_view sql) {
  if (mysql == nullptr) {
    return Fail(ErrorCode::kUnavailable, "mysql_stmt_init(" + name + "): not connected");
  }
  MysqlStmtPtr stmt{mysql_stmt_init(mysql)};
  if (!stmt) {
    return Fail(
        FromMysqlErrno(mysql_errno(mysql), "mysql_stmt_init(" + name + ")", mysql_error(mysql)));
  }
  if (mysql_stmt_prepare(stmt.get(), sql.data(), sql.size()) != 0) {
    return Fail(FromMysqlErrno(mysql_stmt_errno(stmt.get()), "mysql_stmt_prepare(" + name + ")",
                               mysql_stmt_error(stmt.get())));
  }
  return std::unique_ptr<PreparedStatement>(
      new PreparedStatement(std::move(stmt), std::move(name)));
}

unsigned long PreparedStatement::param_count() const { return mysql_stmt_param_count(stmt_.get()); }

Error PreparedStatement::StmtError(std::string_view call) const {
  std::string where(call);
  where += "(" + name_ + ")";
  return FromMysqlErrno(mysql_stmt_errno(stmt_.get()), where, mysql_stmt_error(stmt_.get()));
}

Result<void> PreparedStatement::FreeResult() {
  has_result_ = false;
  on_row_ = false;
  if (mysql_stmt_free_result(stmt_.get()) != 0) {
    return Fail(StmtError("mysql_stmt_free_result"));
  }
  return {};
}

namespace {

// Points `b` at `v`, which the caller keeps alive until the statement ran; the library only
// reads it.
template <class T>
void BindValue(MYSQL_BIND& b, const T& v) {
  if constexpr (std::is_same_v<T, std::monostate>) {
    b.buffer_type = MYSQL_TYPE_NULL;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    b.buffer_type = MYSQL_TYPE_LONGLONG;
    b.buffer = const_cast<int64_t*>(&v);
  } else if constexpr (std::is_same_v<T, double>) {
    b.buffer_type = MYSQL_TYPE_DOUBLE;
    b.buffer = const_cast<double*>(&v);
  } else {  // std::string or std::string_view
    b.buffer_type = MYSQL_TYPE_STRING;
    b.buffer = const_cast<char*>(v.data());
    b.buffer_length = v.size();
  }
}

}  // namespace

template <class Value>
Result<void> PreparedStatement::BindAndExecute(std::span<const Value> params) {
  if (has_result_) {
    if (auto freed = FreeResult(); !freed) {
      return freed;
    }
  }
  on_row_ = false;
  const unsigned long expected = param_count();
  if (expected != params.size()) {
    return Fail(ErrorCode::kInvalidArgument, "prepared statement " + name_ + " takes " +
                                                 std::to_string(expected) + " parameters, " +
                                                 std::to_string(params.size()) + " given");
  }
  if (expected > 0) {
    param_binds_.assign(params.size(), MYSQL_BIND{});
    for (size_t i = 0; i < params.size(); ++i) {
      MYSQL_BIND& b = param_binds_[i];
      std::visit([&b](const auto& v) { BindValue(b, v); }, params[i]);
    }
    if (mysql_stmt_bind_param(stmt_.get(), param_binds_.data()) != 0) {
      return Fail(StmtError("mysql_stmt_bind_param"));
    }
  }
  CountStatementSent();
  if (mysql_stmt_execute(stmt_.get()) != 0) {
    return Fail(StmtError("mysql_stmt_execute"));
  }
  if (mysql_stmt_field_count(stmt_.get()) == 0) {
    return {};
  }
  return BindResult();
}

Result<void> PreparedStatement::Execute(std::span<const SqlValue> params) {
  return BindAndExecute(params);
}

Result<void> PreparedStatement::ExecuteRefs(std::span<const SqlRef> params) {
  return BindAndExecute(params);
}

Result<void> PreparedStatement::BindResult() {
  MysqlResPtr meta{mysql_stmt_result_metadata(stmt_.get())};
  if (!meta) {
    return Fail(StmtError("mysql_stmt_result_metadata"));
  }
  const unsigned int count = mysql_num_fields(meta.get());
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
  columns_.resize(count);
  result_binds_.assign(count, MYSQL_BIND{});
  for (unsigned int i = 0; i < count; ++i) {
    Column& c = columns_[i];
    MYSQL_BIND& b = result_binds_[i];
    b.is_null = &c.is_null;
    b.error = &c.error;
    b.length = &c.length;
    if (IsIntegerType(fields[i].type)) {
      c.kind = Column::Kind::kInt;
      b.buffer_type = MYSQL_TYPE_LONGLONG;
      b.buffer = &c.int_value;
    } else if (fields[i].type == MYSQL_TYPE_FLOAT || fields[i].type == MYSQL_TYPE_DOUBLE) {
      c.kind = Column::Kind::kDouble;
      b.buffer_type = MYSQL_TYPE_DOUBLE;
      b.buffer = &c.double_value;
    } else {
      c.kind = Column::Kind::kString;
      if (c.text.size() < kInitialTextBuffer) {
        c.text.resize(kInitialTextBuffer);
      }
      b.buffer_type = MYSQL_TYPE_STRING;
      b.buffer = c.text.data();
      b.buffer_length = c.text.size();
    }
  }
  if (mysql_stmt_bind_result(stmt_.get(), result_binds_.data()) != 0) {
    return Fail(StmtError("mysql_stmt_bind_result"));
  }
  // Buffering the whole result frees the connection for the next statement at once.
  if (mysql_stmt_store_result(stmt_.get()) != 0) {
    return Fail(StmtError("mysql_stmt_store_result"));
  }
  has_result_ = true;
  return {};
}

Result<bool> PreparedStatement::Next() {
  on_row_ = false;
  if (!has_result_) {
    return false;
  }
  const int rc = mysql_stmt_fetch(stmt_.get());
  if (rc == MYSQL_NO_DATA) {
    if (auto freed = FreeResult(); !freed) {
      return Fail(freed.error());
    }
    return false;
  }
  if (rc != 0 && rc != MYSQL_DATA_TRUNCATED) {
    return Fail(StmtError("mysql_stmt_fetch"));
  }
  on_row_ = true;
  return true;
}

Result<const PreparedStatement::Column*> PreparedStatement::CurrentColumn(size_t i,
                                                                          Column::Kind kind) const {
  if (!on_row_ || i >= columns_.size()) {
    return Fail(ErrorCode::kInternal, name_ + ": no column " + std::to_string(i) +
                                          (on_row_ ? " in the row" : ": no current row"));
  }
  const Column& c = columns_[i];
  if (c.kind != kind) {
    return Fail(ErrorCode::kInternal,
                name_ + ": column " + std::to_string(i) + " is not of the type asked for");
  }
  return &c;
}

Result<int64_t> PreparedStatement::IntAt(size_t i) const {
  auto c = CurrentColumn(i, Column::Kind::kInt);
  if (!c) {
    return Fail(c.error());
  }
  if ((*c)->is_null) {
    return 0;
  }
  if ((*c)->error) {
    return Fail(ErrorCode::kInternal, name_ + ": column " + std::to_string(i) + " overflows int64");
  }
  return (*c)->int_value;
}

Result<std::string_view> PreparedStatement::TextAt(size_t i) const {
  auto c = CurrentColumn(i, Column::Kind::kString);
  if (!c) {
    return Fail(c.error());
  }
  if ((*c)->is_null) {
    return std::string_view();
  }
  if ((*c)->length > (*c)->text.size()) {
    return Fail(ErrorCode::kInternal, name_ + ": column " + std::to_string(i) + " holds " +
                                          std::to_string((*c)->length) +
                                          " bytes, more than its buffer");
  }
  return std::string_view((*c)->text.data(), (*c)->length);
}

Result<std::optional<ResultRow>> PreparedStatement::Fetch() {
  auto more = Next();
  if (!more) {
    return Fail(more.error());
  }
  if (!*more) {
    return std::nullopt;
  }
  std::vector<SqlValue> cells;
  cells.reserve(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    const Column& c = columns_[i];
    if (c.is_null) {
      cells.emplace_back(std::monostate{});
      continue;
    }
    switch (c.kind) {
      case Column::Kind::kInt:
        if (c.error) {
          return Fail(ErrorCode::kInternal, "mysql_stmt_fetch(" + name_ + "): column " +
                                                std::to_string(i) + " overflows int64");
        }
        cells.emplace_back(c.int_value);
        break;
      case Column::Kind::kDouble:
        cells.emplace_back(c.double_value);
        break;
      case Column::Kind::kString:
        if (c.length <= c.text.size()) {
          cells.emplace_back(std::string(c.text.data(), c.length));
        } else {
          std::string full(c.length, '\0');
          unsigned long got = 0;
          MYSQL_BIND b{};
          b.buffer_type = MYSQL_TYPE_STRING;
          b.buffer = full.data();
          b.buffer_length = full.size();
          b.length = &got;
          if (mysql_stmt_fetch_column(stmt_.get(), &b, static_cast<unsigned int>(i), 0) != 0) {
            return Fail(StmtError("mysql_stmt_fetch_column"));
          }
          full.resize(std::min<size_t>(got, full.size()));
          cells.emplace_back(std::move(full));
        }
        break;
    }
  }
  return ResultRow(std::move(cells));
}

Result<std::vector<ResultRow>> PreparedStatement::FetchAll() {
  std::vector<ResultRow> rows;
  while (true) {
    auto row = Fetch();
    if (!row) {
      return Fail(row.error());
    }
    if (!*row) {
      return rows;
    }
    rows.push_back(std::move(**row));
  }
}

uint64_t PreparedStatement::AffectedRows() const { return mysql_stmt_affected_rows(stmt_.get()); }

uint64_t PreparedStatement::InsertId() const { return mysql_stmt_insert_id(stmt_.get()); }

}  // namespace room_outbox::core
