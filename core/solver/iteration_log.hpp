#pragma once
// One row per iteration, one column per quantity (STYLE.md 7): the yardstick's columns, then
// the solver's own. Reports read only these files.
#include <string>
#include <vector>

namespace pbdlab {

struct IterationRow {
  int step = 0;     // the step (frame), from 1
  int substep = 1;  // the substep within the step, from 1 (1 when a step has no substeps)
  int iteration = 0;
  double solver_seconds = 0.0;  // cumulative within the step, yardstick excluded
  double residual = 0.0;
  double relative_residual = 0.0;
  double energy = 0.0;
  std::vector<double> extra;  // the solver's columns in the log's order (NaN: not given)
};

class IterationLog {
 public:
  explicit IterationLog(std::vector<std::string> extra_columns = {})
      : extra_columns_(std::move(extra_columns)) {}
  const std::vector<std::string>& extraColumns() const { return extra_columns_; }
  // Index of a solver column by name, -1 if the log has none of that name.
  int columnIndex(const std::string& name) const;
  // The value of the named solver column in `row` (throws std::out_of_range for an unknown name).
  double value(const IterationRow& row, const std::string& name) const;
  void append(IterationRow row);  // throws std::logic_error if extra has the wrong size
  const std::vector<IterationRow>& rows() const { return rows_; }
  std::vector<IterationRow> rowsOfStep(int step) const;
  // CSV with header
  // "step,substep,iteration,solver_seconds,residual,relative_residual,energy,<extra>";
  // a NaN solver value (not given at that iteration) is written as an empty field.
  std::string toCsv() const;

 private:
  std::vector<std::string> extra_columns_;
  std::vector<IterationRow> rows_;
};

}  // namespace pbdlab
