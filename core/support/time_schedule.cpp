#include "core/support/time_schedule.hpp"

namespace pbdlab {

double evaluatePiecewiseLinear(const SchedulePoints& points, double t) {
  if (t <= points.front().first) return points.front().second;
  for (size_t k = 1; k < points.size(); ++k)
    if (t <= points[k].first) {
      const auto& [t0, a0] = points[k - 1];
      const auto& [t1, a1] = points[k];
      return t1 > t0 ? a0 + (a1 - a0) * (t - t0) / (t1 - t0) : a1;
    }
  return points.back().second;
}

TimeSchedule piecewiseLinearSchedule(SchedulePoints points) {
  if (points.empty()) return {};
  return [points = std::move(points)](double t) { return evaluatePiecewiseLinear(points, t); };
}

}  // namespace pbdlab
