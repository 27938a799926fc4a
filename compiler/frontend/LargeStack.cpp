/// @file LargeStack.cpp
/// @brief pthread-based implementation of runWithLargeStack.
#include "LargeStack.h"

#include <pthread.h>

#include <cstring>

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

int runWithLargeStack(const std::function<int()> &fn, std::string &error, size_t stackBytes) {
  Job job{&fn, 0};
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc == 0) {
    pthread_t thread;
    rc = pthread_attr_setstacksize(&attr, stackBytes);
    if (rc == 0) rc = pthread_create(&thread, &attr, trampoline, &job);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
      pthread_join(thread, nullptr);
      return job.result;
    }
  }
  error = "cannot start the parser's thread with a " + std::to_string(stackBytes >> 20) + " MiB stack (" +
          std::strerror(rc) + "); raise the address-space limit (ulimit -v)";
  return -1;
}

} // namespace purlin
