// What a path is when it is not a regular file, for messages
// ("exists and is a FIFO"); shared by the input and output policies.
#ifndef SHARDPOINT_IO_SRC_FILE_KIND_HPP
#define SHARDPOINT_IO_SRC_FILE_KIND_HPP

#include <sys/stat.h>

namespace shardpoint::io::detail {

inline const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

} // namespace shardpoint::io::detail

#endif
