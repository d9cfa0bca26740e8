#pragma once
// A scalar function of time: a muscle's activation a(t) (scene `material.activation`) and a
// load's scale s(t) (scene `loads[k].schedule`). Both are read from the same piecewise-linear
// list of [t, value] points and evaluated by the one function below.
#include <functional>
#include <utility>
#include <vector>

namespace pbdlab {

using TimeSchedule = std::function<double(double t)>;

// [t, value] points with times not decreasing (a repeated time is a jump: the later point
// holds from that time on). Checked by the scene reader, not here.
using SchedulePoints = std::vector<std::pair<double, double>>;

// The piecewise-linear interpolant of `points`, constant outside [t_first, t_last]. An empty
// list gives a null schedule (the caller's default applies: no activation, a load at 1).
TimeSchedule piecewiseLinearSchedule(SchedulePoints points);

// The same evaluated once, without building a std::function.
double evaluatePiecewiseLinear(const SchedulePoints& points, double t);

}  // namespace pbdlab
