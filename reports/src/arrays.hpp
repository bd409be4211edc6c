// SPDX-License-Identifier: MIT OR Apache-2.0
// Argument checks shared by the bindings: exact dtypes (no silent casts of raw bits), views of any
// layout handled or refused with a Python exception, sizes that never wrap, and errors that name the
// argument, as Python's TypeError / ValueError / MemoryError.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace w8a16::py_bind {
namespace py = pybind11;

template <class T>
constexpr const char* dtype_name();
template <>
constexpr const char* dtype_name<std::uint8_t>() {
  return "uint8";
}
template <>
constexpr const char* dtype_name<std::uint16_t>() {
  return "uint16";
}
template <>
constexpr const char* dtype_name<std::uint32_t>() {
  return "uint32";
}
template <>
constexpr const char* dtype_name<float>() {
  return "float32";
}
template <>
constexpr const char* dtype_name<double>() {
  return "float64";
}

inline std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

inline std::string shape_str(const std::vector<py::ssize_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

inline std::string bytes_str(double bytes) {
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  return buf;
}

// The machine's memory, for refusing a copy that could only end in the OOM killer: numpy's
// allocation of more than the memory succeeds under overcommit and fails only when touched.
inline double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

// `obj` as an array of exactly dtype T, any layout (strided, broadcast, reversed), without a copy.
// Raw bits must never be converted (a float array passed as uint16 would be rounded to integers), so
// a different dtype is a TypeError.
template <class T>
py::array any_layout_array(const py::handle& obj, const char* name) {
  if (!py::isinstance<py::array>(obj)) {
    // A numpy scalar's type is named like the dtype ("got uint16"), which reads as if it were right.
    const bool scalar = py::isinstance(obj, py::module_::import("numpy").attr("generic"));
    throw py::type_error(std::string(name) + " must be a numpy array of dtype " + dtype_name<T>() + ", got " +
                         (scalar ? "a numpy scalar of type " : "") +
                         std::string(py::str(py::type::of(obj).attr("__name__"))) +
                         (scalar ? " (np.asarray makes it a 0-d array)" : ""));
  }
  auto arr = py::reinterpret_borrow<py::array>(obj);
  const py::dtype want = py::dtype::of<T>();
  if (arr.dtype().kind() != want.kind() || arr.dtype().itemsize() != want.itemsize() ||
      !py::bool_(arr.dtype().attr("isnative")))
    throw py::type_error(std::string(name) + " must have dtype " + dtype_name<T>() + " (native byte order), got " +
                         std::string(py::str(arr.dtype())));
  return arr;
}

[[noreturn]] inline void raise_memory_error(const std::string& message) {
  PyErr_SetString(PyExc_MemoryError, message.c_str());
  throw py::error_already_set();
}

// `arr` (of dtype T) as a C-contiguous array: as it is when it already is one, else a contiguous copy
// of the view; checked_array() is any_layout_array() and then this. Shapes are best checked
// between the two, so that a view of an absurd shape is refused before a copy is tried. A copy that cannot be made, or would need more than half of this
// machine's memory, is a MemoryError naming the argument; a null array never reaches the caller.
template <class T>
py::array_t<T, py::array::c_style> contiguous(const py::array& arr, const char* name) {
  if (arr.flags() & py::array::c_style) return py::reinterpret_borrow<py::array_t<T, py::array::c_style>>(arr);
  const double bytes = static_cast<double>(arr.size()) * sizeof(T);
  const std::string what = std::string(name) + ": the " + shape_str(arr) +
                           " view is not C-contiguous and its contiguous copy needs " + bytes_str(bytes);
  const double memory = physical_memory_bytes();
  if (memory > 0 && bytes > memory / 2)
    raise_memory_error(what + ", more than half of this machine's " + bytes_str(memory) +
                       " (pass a contiguous array, or a smaller view)");
  // ensure() returns a null array, its error cleared, when numpy cannot make the copy.
  auto copy = py::array_t<T, py::array::c_style>::ensure(arr);
  if (!copy) raise_memory_error(what + ", which numpy could not allocate");
  return copy;
}

template <class T>
py::array_t<T, py::array::c_style> checked_array(const py::handle& obj, const char* name) {
  return contiguous<T>(any_layout_array<T>(obj, name), name);
}

// An output array of `shape`, or a MemoryError naming it: pybind11 throws error_already_set, with
// numpy's message, which does not say which output.
template <class T>
py::array_t<T> new_array(const std::vector<py::ssize_t>& shape, const char* what) {
  double bytes = sizeof(T);
  for (const py::ssize_t d : shape) bytes *= static_cast<double>(d);
  const std::string message = std::string(what) + ": cannot allocate the " + shape_str(shape) + " " + dtype_name<T>() +
                              " array (" + bytes_str(bytes) + ")";
  const double memory = physical_memory_bytes();
  if (memory > 0 && bytes > memory / 2)
    raise_memory_error(message + ": more than half of this machine's " + bytes_str(memory));
  try {
    return py::array_t<T>(shape);
  } catch (const py::error_already_set&) {
    raise_memory_error(message);
  } catch (const std::bad_alloc&) {
    raise_memory_error(message);
  }
}

inline void require_ndim(const py::array& a, py::ssize_t ndim, const char* name, const char* layout) {
  if (a.ndim() != ndim)
    throw py::value_error(std::string(name) + " must be " + std::to_string(ndim) + "-D " + layout + ", got shape " +
                          shape_str(a));
}

inline std::vector<py::ssize_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

// A dimension that the emulator takes as a 32-bit count (M, N, K, columns): a ValueError naming it,
// never a value wrapped modulo 2^32.
inline std::uint32_t checked_u32(py::ssize_t v, const std::string& what) {
  if (v < 0 || v > static_cast<py::ssize_t>(UINT32_MAX))
    throw py::value_error(what + " = " + std::to_string(v) + " is out of range (0.." + std::to_string(UINT32_MAX) +
                          ")");
  return static_cast<std::uint32_t>(v);
}

// A Python integer argument (an int or anything with __index__, never a bool or a float) within
// [lo, hi]: a TypeError or a ValueError naming it, never pybind11's generic "incompatible function
// arguments" or a RuntimeError from a failed cast of an integer too large for 64 bits.
inline long long checked_int(const py::handle& obj, const char* name, long long lo, long long hi,
                             const std::string& range_note = "") {
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    throw py::type_error(std::string(name) + " must be an integer, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || v < lo || v > hi)
    throw py::value_error(std::string(name) + " = " + std::string(py::str(index)) + " is out of range (" +
                          (range_note.empty() ? std::to_string(lo) + ".." + std::to_string(hi) : range_note) + ")");
  return v;
}

// The most worker threads one call may start: more than the cores of any machine these calls are
// made on. Each thread reserves its stack (8 MiB by default), so a count in the thousands exhausts
// a limited address space or process count for no speed.
inline constexpr long long kMaxThreads = 1024;

// A `threads` argument: 0 (one per core) or 1..kMaxThreads.
inline unsigned checked_threads(const py::handle& obj) {
  return static_cast<unsigned>(checked_int(obj, "threads", 0, kMaxThreads,
                                           "0 for one thread per core, or 1.." + std::to_string(kMaxThreads)));
}

}  // namespace w8a16::py_bind
