#pragma once
// Tell ASan and TSan about stack switches. Without this, ASan takes a
// fiber's stack for a corrupted thread stack and TSan mixes up the
// happens-before histories of fibers that share a thread. No-ops in a normal
// build. (Boost 1.74's fcontext backend does not annotate by itself.)

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace affine::detail::san {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool tsan = true;
#else
inline constexpr bool tsan = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline void start_switch(void** fake_save, const void* bottom, std::size_t size) {
  __sanitizer_start_switch_fiber(fake_save, bottom, size);
}
inline void finish_switch(void* fake_save, const void** old_bottom, std::size_t* old_size) {
  __sanitizer_finish_switch_fiber(fake_save, old_bottom, old_size);
}
#else
inline void start_switch(void**, const void*, std::size_t) {}
inline void finish_switch(void*, const void**, std::size_t*) {}
#endif

#if defined(__SANITIZE_THREAD__)
inline void* current_fiber() { return __tsan_get_current_fiber(); }
inline void* create_fiber() { return __tsan_create_fiber(0); }
inline void destroy_fiber(void* f) { __tsan_destroy_fiber(f); }
inline void switch_to(void* f) { __tsan_switch_to_fiber(f, 0); }
#else
inline void* current_fiber() { return nullptr; }
inline void* create_fiber() { return nullptr; }
inline void destroy_fiber(void*) {}
inline void switch_to(void*) {}
#endif

}  // namespace affine::detail::san
