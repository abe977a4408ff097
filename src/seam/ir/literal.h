// A constant's value: a dense array of elements in logical (row-major) order,
// a tuple of literals, or a placeholder for a value the text elided (`{...}`).
// Element types Seam does not compute with keep their text verbatim.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "seam/ir/element_memory.h"
#include "seam/ir/shape.h"

namespace seam {


// The allocator of element buffers. It allocates without value-initializing
// (buffers a writer fills anyway, compiled kernels' outputs, are not written
// twice), and it can lend a buffer memory someone else owns: an argument in
// a caller's memory (the Python API's arrays) runs without a copy. A lent
// buffer is handed out once, at the buffer's construction, and never freed;
// should its vector grow, the new storage is Seam's own. Nothing may write
// into a lent buffer: Seam only reads its arguments.
template <typename T>
struct ElementAllocator {
  using value_type = T;
  // The lent memory travels with the buffer it is in.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  ElementAllocator() = default;
  template <typename U>
  ElementAllocator(const ElementAllocator<U>&) noexcept {}
  // Lends `memory` (`count` elements) to the next allocation of that size.
  ElementAllocator(T* memory, size_t count) noexcept : lent_(memory), lent_count_(count) {}

  // A copy of a buffer owns its memory.
  ElementAllocator select_on_container_copy_construction() const { return {}; }

  T* allocate(size_t n) {
    if (lent_ != nullptr && !lent_out_ && n == lent_count_) {
      lent_out_ = true;
      return lent_;
    }
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(AllocateElements(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (p != lent_) FreeElements(p, n * sizeof(T));
  }
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  // Any allocator frees any buffer (lent memory is recognised by address).
  friend bool operator==(const ElementAllocator&, const ElementAllocator&) { return true; }

 private:
  template <typename U>
  friend struct ElementAllocator;
  T* lent_ = nullptr;
  size_t lent_count_ = 0;
  bool lent_out_ = false;
};
using ByteBuffer = std::vector<uint8_t, ElementAllocator<uint8_t>>;

// A buffer of `bytes` bytes that reads `memory`, which the caller owns and
// keeps unchanged while the buffer lives.
inline ByteBuffer LentBytes(const void* memory, size_t bytes) {
  return ByteBuffer(
      bytes, ElementAllocator<uint8_t>(static_cast<uint8_t*>(const_cast<void*>(memory)), bytes));
}

class Literal {
 public:
  // A literal of `shape` whose elements are all zero.
  explicit Literal(Shape shape);
  // An array literal whose elements are left as memory had them: for a
  // writer that fills every element.
  static Literal Uninitialized(Shape shape);
  // An array literal of `shape` holding `bytes` (taken, not copied; resized
  // to the shape's size if it is not that).
  static Literal FromBytes(Shape shape, ByteBuffer bytes);
  // A tuple of `elements` (taken, not copied), of tuple shape `shape`.
  static Literal Tuple(Shape shape, std::vector<Literal> elements);
  // A literal whose values were elided in text as `{...}`.
  static Literal Elided(Shape shape);
  // A literal of an opaque element type, kept as the text that wrote it.
  static Literal Opaque(Shape shape, std::string text);

  const Shape& shape() const { return shape_; }
  bool is_elided() const { return elided_; }
  // Which elided data this is, when it was copied from another instruction's
  // constant (passes clone constants under new names); empty means "the
  // constant's own name". The interpreter seeds elided data from it.
  const std::string& elided_identity() const { return elided_identity_; }
  void set_elided_identity(std::string identity) { elided_identity_ = std::move(identity); }
  bool is_opaque() const { return !opaque_text_.empty(); }
  const std::string& opaque_text() const { return opaque_text_; }
  int64_t element_count() const { return element_count_; }

  // Element access by logical linear index. Floats convert to and from double
  // (rounding to nearest even for bf16/f16); integers and pred use the raw
  // two's-complement bits, sign-extended for signed types.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double value);
  uint64_t GetBits(int64_t i) const;
  void SetBits(int64_t i, uint64_t bits);
  int64_t GetInt(int64_t i) const;
  std::complex<double> GetComplex(int64_t i) const;
  void SetComplex(int64_t i, std::complex<double> value);

  const std::vector<Literal>& tuple_elements() const { return elements_; }
  std::vector<Literal>& mutable_tuple_elements() { return elements_; }

  // The elements as an array of their storage type (see eval's element
  // traits); the buffer is allocated with operator new, so suitably aligned.
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  template <typename T>
  T* mutable_data() { return reinterpret_cast<T*>(bytes_.data()); }

  const ByteBuffer& bytes() const { return bytes_; }
  ByteBuffer& mutable_bytes() { return bytes_; }

  bool operator==(const Literal& other) const = default;

 private:
  Shape shape_;
  int64_t element_count_ = 0;
  ByteBuffer bytes_;
  std::vector<Literal> elements_;
  bool elided_ = false;
  std::string elided_identity_;
  std::string opaque_text_;
};

}  // namespace seam
