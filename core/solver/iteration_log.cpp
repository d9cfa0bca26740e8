#include "core/solver/iteration_log.hpp"

#include <cmath>
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

int IterationLog::columnIndex(const std::string& name) const {
  for (size_t k = 0; k < extra_columns_.size(); ++k)
    if (extra_columns_[k] == name) return static_cast<int>(k);
  return -1;
}

double IterationLog::value(const IterationRow& row, const std::string& name) const {
  const int k = columnIndex(name);
  if (k < 0) throw std::out_of_range("IterationLog: no solver column '" + name + "'");
  return row.extra[k];
}

std::vector<IterationRow> IterationLog::rowsOfStep(int step) const {
  std::vector<IterationRow> out;
  for (const IterationRow& row : rows_)
    if (row.step == step) out.push_back(row);
  return out;
}

std::string IterationLog::toCsv() const {
  std::ostringstream out;
  out << "step,substep,iteration,solver_seconds,residual,relative_residual,energy";
  for (const std::string& column : extra_columns_) out << ',' << column;
  out << '\n' << std::setprecision(10);
  for (const IterationRow& row : rows_) {
    out << row.step << ',' << row.substep << ',' << row.iteration << ',' << row.solver_seconds << ',' << row.residual
        << ',' << row.relative_residual << ',' << row.energy;
    for (double value : row.extra) {
      out << ',';
      if (!std::isnan(value)) out << value;
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace pbdlab
