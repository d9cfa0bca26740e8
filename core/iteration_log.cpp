#include "core/iteration_log.hpp"

#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace pbdlab {

void IterationLog::append(IterationRow row) {
  if (row.extra.size() != extra_columns_.size()) {
    throw std::logic_error("IterationLog: row has " + std::to_string(row.extra.size()) +
                           " solver columns, the log declares " +
                           std::to_string(extra_columns_.size()));
  }
  rows_.push_back(std::move(row));
}

std::vector<IterationRow> IterationLog::rowsOfStep(int step) const {
  std::vector<IterationRow> out;
  for (const IterationRow& row : rows_)
    if (row.step == step) out.push_back(row);
  return out;
}

std::string IterationLog::toCsv() const {
  std::ostringstream out;
  out << "step,iteration,solver_seconds,residual,relative_residual,energy";
  for (const std::string& column : extra_columns_) out << ',' << column;
  out << '\n' << std::setprecision(10);
  for (const IterationRow& row : rows_) {
    out << row.step << ',' << row.iteration << ',' << row.solver_seconds << ',' << row.residual
        << ',' << row.relative_residual << ',' << row.energy;
    for (double value : row.extra) out << ',' << value;
    out << '\n';
  }
  return out.str();
}

}  // namespace pbdlab
