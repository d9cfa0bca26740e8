#pragma once
// A number as messages and mesh descriptions print it: 6 significant digits, the shortest
// form ("0.5", "1e+06"), as an ostream with precision 6 writes it.
#include <sstream>
#include <string>

namespace pbdlab {

inline std::string shortNumber(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

}  // namespace pbdlab
