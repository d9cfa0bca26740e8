#pragma once
// Fixed-size Eigen types shared by every layer. Doubles everywhere (TOOLCHAIN.md: floats
// gain little and need flush-to-zero).
#include <Eigen/Core>

namespace pbdlab {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;
using VecX = Eigen::VectorXd;
using MatX3 = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

// Positions of all nodes stacked as one vector [x0 y0 z0 x1 y1 z1 ...], the layout every
// solver and the yardstick share.
using Positions = Eigen::VectorXd;

// Column-major vectorization vec(F)[i + 3 j] = F(i, j); dP/dF is the 9x9 matrix
// dP[i + 3 j] / dF[k + 3 l] in this ordering.
inline Vec9 flatten(const Mat3& A) { return Eigen::Map<const Vec9>(A.data()); }
inline Mat3 unflatten(const Vec9& a) { return Eigen::Map<const Mat3>(a.data()); }

}  // namespace pbdlab
