/// @file LargeStack.cpp
/// @brief pthread-based implementation of runWithLargeStack.
#include "LargeStack.h"

#include <pthread.h>

namespace purlin {
namespace {

struct Job {
  const std::function<int()> *fn;
  int result;
};

void *trampoline(void *arg) {
  auto *job = static_cast<Job *>(arg);
  job->result = (*job->fn)();
  return nullptr;
}

} // namespace

int runWithLargeStack(const std::function<int()> &fn, size_t stackBytes) {
  Job job{&fn, 0};
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0)
    return fn();
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, stackBytes) == 0 &&
                 pthread_create(&thread, &attr, trampoline, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started)
    return fn();
  pthread_join(thread, nullptr);
  return job.result;
}

} // namespace purlin
