#pragma once
// A non-owning reference to a callable: what output() calls for each segment.
// Unlike std::function it never allocates; the referenced callable must
// outlive the call that receives the reference (it is never stored).

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "stack/wire/tcp_segment.hh"

namespace affine::stack::tcp {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
  function_ref(F&& f)  // NOLINT: implicit by design, like a reference
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(object), std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

// Receives each segment output() emits. The payload points into the send
// buffer and is valid only during the call: the sink copies it into a packet.
using segment_sink = function_ref<void(const tcp_segment&)>;

}  // namespace affine::stack::tcp
