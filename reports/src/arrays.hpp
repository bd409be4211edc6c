// SPDX-License-Identifier: MIT OR Apache-2.0
// Argument checks shared by the bindings: exact dtypes (no silent casts of raw bits) and errors
// that name the argument, as Python's TypeError / ValueError.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::py_bind {
namespace py = pybind11;

template <class T> constexpr const char* dtype_name();
template <> constexpr const char* dtype_name<std::uint8_t>() { return "uint8"; }
template <> constexpr const char* dtype_name<std::uint16_t>() { return "uint16"; }
template <> constexpr const char* dtype_name<std::uint32_t>() { return "uint32"; }
template <> constexpr const char* dtype_name<float>() { return "float32"; }

inline std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// `obj` as a C-contiguous array of exactly dtype T. Raw bits must never be converted (a float
// array passed as uint16 would be rounded to integers), so a different dtype is a TypeError.
template <class T>
py::array_t<T, py::array::c_style> checked_array(const py::handle& obj, const char* name) {
  if (!py::isinstance<py::array>(obj))
    throw py::type_error(std::string(name) + " must be a numpy array of dtype " + dtype_name<T>() + ", got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  auto arr = py::reinterpret_borrow<py::array>(obj);
  const py::dtype want = py::dtype::of<T>();
  if (arr.dtype().kind() != want.kind() || arr.dtype().itemsize() != want.itemsize() ||
      !py::bool_(arr.dtype().attr("isnative")))
    throw py::type_error(std::string(name) + " must have dtype " + dtype_name<T>() + " (native byte order), got " +
                         std::string(py::str(arr.dtype())));
  return py::array_t<T, py::array::c_style>::ensure(arr);
}

inline void require_ndim(const py::array& a, py::ssize_t ndim, const char* name, const char* layout) {
  if (a.ndim() != ndim)
    throw py::value_error(std::string(name) + " must be " + std::to_string(ndim) + "-D " + layout + ", got shape " +
                          shape_str(a));
}

inline std::vector<py::ssize_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

}  // namespace w8a16::py_bind
