#pragma once
// The memory of a blocklist table's big arrays, mapped from the kernel
// (anonymous mmap) instead of taken from malloc. A table of a million
// rules is ~12 MiB that lives for hours and is then replaced whole: from
// malloc, its release would raise glibc's mmap threshold so that the next
// table comes from the heap, where freeing it returns nothing to the
// kernel unless it happens to sit at the top. Mapped, a table's pages go
// back the moment the last reference to it drops, and a process's RSS
// after a swap is one table again, not two.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace nxdns::block {

template <class T>
class MappedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  MappedArray() = default;
  // `n` zero-filled elements (the kernel's zero pages: untouched ones cost
  // no memory). Throws std::bad_alloc when the kernel refuses.
  explicit MappedArray(std::size_t n) {
    if (n == 0) return;
    if (n > max_bytes / sizeof(T)) throw std::bad_alloc();
    void* p = ::mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    size_ = n;
    mapped_ = round_up(n * sizeof(T));
  }
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  MappedArray(MappedArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
        mapped_(std::exchange(o.mapped_, 0)) {}
  MappedArray& operator=(MappedArray&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      mapped_ = std::exchange(o.mapped_, 0);
    }
    return *this;
  }
  ~MappedArray() { reset(); }

  // Keeps the first `n` elements and unmaps the whole pages after them.
  void shrink(std::size_t n) {
    if (n >= size_) return;
    if (n == 0) return reset();
    const std::size_t keep = round_up(n * sizeof(T));
    if (keep < mapped_ && ::munmap(reinterpret_cast<char*>(data_) + keep, mapped_ - keep) == 0) mapped_ = keep;
    size_ = n;
  }
  void reset() noexcept {
    if (data_) ::munmap(data_, mapped_);
    data_ = nullptr;
    size_ = 0;
    mapped_ = 0;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  // What the mapping holds, whole pages.
  std::size_t mapped_bytes() const noexcept { return mapped_; }

 private:
  static constexpr std::size_t max_bytes = std::size_t{1} << 40;
  // The kernel's page, asked once: 4 KiB on most machines, 16 KiB on a
  // Raspberry Pi 5's kernel; munmap of a tail must start on one.
  static std::size_t round_up(std::size_t b) {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (b + page - 1) / page * page;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;  // octets mapped at data_
};

}  // namespace nxdns::block
