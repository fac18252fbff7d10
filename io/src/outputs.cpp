// The output policy (see outputs.hpp).
//
// Copyright 2026 The shardpoint authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <shardpoint/error.hpp>
#include <shardpoint/io/outputs.hpp>
#include <shardpoint/io/text.hpp>

#include "file_kind.hpp"

namespace shardpoint::io {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw bad_input_error(quote(path.string()) + ": " + what);
}

// Whether a file or folder is read-only: no one may write it (mode a-w,
// which root's writes would otherwise ignore), or this user may not.
bool read_only(const fs::path& path, const struct stat& st) {
  return (st.st_mode & 0222) == 0 || ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0;
}

std::string mode_of(const struct stat& st) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return mode;
}

// Refuses to replace an existing file that is read-only: one no one may
// write (mode a-w, which root's writes would otherwise ignore), or that this
// user may not write -- as `cp` refuses it; a rename over it needs only the
// folder's permission, and would replace what its owner protected (a
// trial's --output-config replaced a 0444 file in a read-only folder).
void refuse_read_only(const fs::path& path, const struct stat& st) {
  if (read_only(path, st)) {
    fail(path, "exists and is read-only (mode " + mode_of(st) +
                   "); shardpoint does not replace it: make it writable, or remove it");
  }
}

// Refuses an output whose folder is missing, is a file, cannot be reached
// ("file/o.onnx" where file is a file: not "does not exist"), or is
// read-only: a helper running as root made a folder of split's in a 0555
// folder of shared models, which root's writes do not see as read-only.
void require_output_folder(const fs::path& path, const fs::path& folder, const std::string& named) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) {
    const int e = errno;
    fail(path, named + quote(folder.string()) +
                   (e == ENOENT ? std::string(" does not exist")
                                : " cannot be used: " + std::string(std::strerror(e))));
  }
  if (!S_ISDIR(st.st_mode)) {
    fail(path, named + quote(folder.string()) + " is not a folder");
  }
  if (read_only(folder, st)) {
    fail(path, named + quote(folder.string()) + " is read-only (mode " + mode_of(st) +
                   "); shardpoint does not write into it");
  }
}

// ---- the temporaries of the process, for the signal watcher ---------------

struct temporaries {
  std::mutex lock;
  std::vector<fs::path> paths; // files and folders shardpoint made, removed whole

  static temporaries& get() {
    static temporaries* t = new temporaries; // never destroyed: the watcher may outlive main
    return *t;
  }
  void add(const fs::path& p) {
    const std::lock_guard<std::mutex> g(lock);
    paths.push_back(p);
  }
  /// Runs `make`, which creates the registered temporary `p` (registered
  /// here first when `register_first`), under the lock, and returns its
  /// result and errno. The watcher takes the lock when a signal comes and
  /// keeps it: a temporary is either made before (and it removes it) or
  /// never, so none is made behind its back.
  template <class Make>
  std::pair<int, int> made(const fs::path& p, bool register_first, Make make) {
    const std::lock_guard<std::mutex> g(lock);
    if (register_first) {
      paths.push_back(p);
    }
    const int r = make();
    return {r, errno};
  }
  bool holds(const fs::path& p) {
    const auto normal = p.lexically_normal();
    const std::lock_guard<std::mutex> g(lock);
    return std::any_of(paths.begin(), paths.end(),
                       [&](const fs::path& q) { return q.lexically_normal() == normal; });
  }
  void drop(const fs::path& p) {
    const std::lock_guard<std::mutex> g(lock);
    const auto it = std::find(paths.rbegin(), paths.rend(), p);
    if (it != paths.rend()) {
      paths.erase(std::next(it).base());
    }
  }
};

// ---- names -----------------------------------------------------------------

constexpr std::size_t name_max = NAME_MAX;
constexpr std::string_view temp_marker = ".shardpoint-";
constexpr std::size_t random_chars = 6;

// "out/", "out/." and "./out" as "out"; refuses the empty path. A ".." is
// kept where it is: it names the parent of what the path before it
// resolves to -- a symbolic link's target's parent, as the kernel reads it
// --, not of that part's text. (Collapsed by its text, a trial's
// "view/../in.onnx", view a link to models/sub, was taken for ./in.onnx:
// as an input, the wrong file was protected and models/in.onnx
// overwritten; as an output, ./in.onnx was written instead.)
fs::path normalised(const fs::path& p, std::string_view what) {
  if (p.empty()) {
    throw bad_input_error(std::string(what) + ": the path is empty");
  }
  fs::path n;
  for (const auto& part : p) {
    if (!part.empty() && part != ".") { // (a trailing '/' is an empty part)
      n /= part;
    }
  }
  return n.empty() ? fs::path(".") : n;
}

fs::path folder_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// The canonical form of a path that may not exist yet: every symbolic link
// of the part that exists resolved. A path the kernel cannot resolve (a
// loop of links, a name too long, a folder on the way that cannot be
// searched, a current folder removed) is refused: its text alone would be
// a guess at what it names (".." collapsed by the text names another
// file than the kernel's).
fs::path canonical_of(const fs::path& p) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(p, ec);
  fs::path c;
  if (!ec) {
    c = fs::weakly_canonical(absolute, ec);
  }
  if (ec) {
    fail(p, "cannot be resolved: " + ec.message());
  }
  return c;
}

bool within(const fs::path& inner, const fs::path& outer) {
  const auto [i, o] = std::mismatch(inner.begin(), inner.end(), outer.begin(), outer.end());
  return o == outer.end();
}

void check_name_length(const fs::path& p) {
  if (p.filename().native().size() > name_max) {
    fail(p, "its name is " + std::to_string(p.filename().native().size()) +
                " bytes long; file names are at most " + std::to_string(name_max));
  }
}

// A name for a temporary beside `target`, within NAME_MAX:
// ".<target name, cut>.shardpoint-XXXXXX".
fs::path temporary_name(const fs::path& target) {
  static std::mutex m;
  static std::mt19937_64 random{std::random_device{}()};
  static constexpr char alphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string name = target.filename().native();
  const std::size_t room = name_max - 1 - temp_marker.size() - random_chars;
  name.resize(std::min(name.size(), room));
  std::string suffix(random_chars, 'x');
  {
    const std::lock_guard<std::mutex> g(m);
    for (auto& c : suffix) {
      c = alphabet[random() % (sizeof alphabet - 1)];
    }
  }
  return folder_of(target) / ("." + name + std::string(temp_marker) + suffix);
}

// Creates a new file for writing beside `target`; registered with the
// watcher before it exists, so that a signal never leaves it behind.
std::pair<int, fs::path> create_temporary_file(const fs::path& target) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path temp = temporary_name(target);
    // 0666 and the umask, as any new file.
    const auto [fd, e] = temporaries::get().made(temp, true, [&] {
      return ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    });
    if (fd >= 0) {
      return {fd, temp};
    }
    temporaries::get().drop(temp);
    if (e != EEXIST) {
      fail(target, std::string("cannot create a file in its folder: ") + std::strerror(e));
    }
  }
  fail(target, "cannot find a free temporary name beside it");
}

fs::path create_temporary_folder(const fs::path& target) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path temp = temporary_name(target);
    const auto [r, e] =
        temporaries::get().made(temp, true, [&] { return ::mkdir(temp.c_str(), 0777); });
    if (r == 0) {
      return temp;
    }
    temporaries::get().drop(temp);
    if (e != EEXIST) {
      fail(target, std::string("cannot create a folder next to it: ") + std::strerror(e));
    }
  }
  fail(target, "cannot find a free temporary name beside it");
}

void remove_whole(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  temporaries::get().drop(p);
}

using detail::kind_of;

// ---- manifests -------------------------------------------------------------

// A folder's manifest as read: its JSON when it is shardpoint's, and
// whether anything of its name is there at all (a refusal says which).
struct manifest_read {
  bool present = false;
  std::optional<nlohmann::json> json; // shardpoint's form, else nothing
};

manifest_read manifest_json(const fs::path& folder) {
  const fs::path file = folder / manifest_name;
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) {
    return {};
  }
  if (!S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
    return {true, std::nullopt};
  }
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) {
    return {true, std::nullopt};
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  const std::size_t got = std::fread(text.data(), 1, text.size(), f);
  std::fclose(f);
  if (got != text.size()) {
    return {true, std::nullopt};
  }
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("files") || !j["files"].is_array() ||
      !j.contains("written_by") || j["written_by"] != "shardpoint") {
    return {true, std::nullopt};
  }
  return {true, std::move(j)};
}

// The relative paths a folder's manifest lists, or why there are none.
struct manifest_files {
  bool present = false;                       // a file of the manifest's name is there
  std::optional<std::set<std::string>> files; // nothing unless the manifest is shardpoint's
};

manifest_files read_manifest(const fs::path& folder) {
  const auto manifest = manifest_json(folder);
  if (!manifest.json) {
    return {manifest.present, std::nullopt};
  }
  const auto& j = *manifest.json;
  std::set<std::string> files;
  for (const auto& x : j["files"]) {
    if (!x.is_string()) {
      return {true, std::nullopt};
    }
    const fs::path rel(x.get<std::string>());
    if (rel.empty() || rel.is_absolute() ||
        std::any_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; })) {
      return {true, std::nullopt};
    }
    files.insert(rel.lexically_normal().generic_string());
  }
  return {true, std::move(files)};
}

// The first entry of `folder` (recursively, links not followed) that the
// manifest `files` does not account for: neither listed, nor a folder on the
// way to one, nor the manifest. Empty when there is none.
std::string stranger_in(const fs::path& folder, const std::set<std::string>& files) {
  std::set<std::string> folders;
  for (const auto& f : files) {
    for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path()) {
      folders.insert(p.generic_string());
    }
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(folder).generic_string();
    const bool is_folder = it->is_directory(ec) && !it->is_symlink(ec);
    if (rel == manifest_name || (is_folder ? folders.count(rel) > 0 : files.count(rel) > 0)) {
      continue;
    }
    return rel;
  }
  return ec ? std::string("(the folder cannot be listed: ") + ec.message() + ")" : std::string();
}

// Removes an old output folder file by file as its manifest lists them;
// anything else stays (and is said).
void remove_old_output(const fs::path& old, const fs::path& was) {
  if (const auto files = read_manifest(old).files) {
    std::set<std::string, std::greater<>> folders;
    for (const auto& f : *files) {
      ::unlink((old / f).c_str());
      for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path()) {
        folders.insert(p.generic_string());
      }
    }
    for (const auto& f : folders) { // deepest first
      ::rmdir((old / f).c_str());
    }
    ::unlink((old / manifest_name).c_str());
  }
  if (::rmdir(old.c_str()) != 0 && errno != ENOENT) {
    std::fprintf(stderr,
                 "shardpoint: warning: %s held files shardpoint did not write when it was "
                 "replaced; they are kept in %s\n",
                 quote(was.string()).c_str(), quote(old.string()).c_str());
  }
}

// A hard link's file: "device:inode".
std::string link_identity(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// The manifest of `files` (in `staging`), with their fingerprints.
std::string manifest_text(const std::vector<std::string>& files, const fs::path& staging) {
  std::vector<std::string> sorted = files;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  nlohmann::json j;
  j["written_by"] = "shardpoint";
  j["files"] = nlohmann::json::array();
  for (const auto& f : sorted) {
    j["files"].push_back(utf8_escaped(f));
    // Not of a hard link to a file of the user's (split's external data,
    // which it never opens): that file is theirs, not shardpoint's output;
    // the link's identity is recorded instead, so that a file put in its
    // place later is never taken for it.
    struct stat st {};
    if (::lstat((staging / f).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (st.st_nlink == 1) {
        j["fingerprints"][utf8_escaped(f)] = fingerprint(staging / f);
      } else {
        j["links"][utf8_escaped(f)] = link_identity(st);
      }
    }
  }
  return j.dump(1) + "\n";
}

int rename2(const fs::path& from, const fs::path& to, unsigned flags) {
  return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags);
}

bool no_renameat2(int e) {
  return e == ENOSYS || e == EINVAL || e == ENOTSUP;
}

} // namespace

// ---- fingerprints --------------------------------------------------------------

std::string fingerprint(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fail(file, std::string("cannot be read: ") + std::strerror(errno));
  }
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  std::vector<char> buffer(std::size_t{1} << 20);
  while (true) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      fail(file, std::string("cannot be read: ") + std::strerror(e));
    }
    if (n == 0) {
      break;
    }
    XXH3_64bits_update(&state, buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits_digest(&state)));
  return std::string("xxh3-64:") + hex;
}

namespace {

// The manifest's map `key` of strings by file name ("fingerprints",
// "links"); empty when it has none.
std::map<std::string, std::string> recorded(const fs::path& folder, const char* key) {
  std::map<std::string, std::string> out;
  const auto manifest = manifest_json(folder).json;
  if (!manifest || !manifest->contains(key) || !(*manifest)[key].is_object()) {
    return out;
  }
  for (const auto& [name, value] : (*manifest)[key].items()) {
    if (value.is_string()) {
      out.emplace(name, value.get<std::string>());
    }
  }
  return out;
}

} // namespace

std::map<std::string, std::string> recorded_fingerprints(const fs::path& folder) {
  return recorded(folder, "fingerprints");
}

// ---- write_atomically --------------------------------------------------------

namespace {

// The output a temporary ".<name>.shardpoint-XXXXXX" stands for, to name it
// in messages.
fs::path target_of(const fs::path& temp) {
  const std::string name = temp.filename().native();
  const auto marker = name.rfind(temp_marker);
  return marker == std::string::npos || marker < 1
             ? temp
             : temp.parent_path() / name.substr(1, marker - 1);
}

// Runs `write` on `fd`, then fsync and close (closed whichever way it
// ends); the first error number, or 0.
int write_sync_close(int fd, const std::function<int(int fd)>& write) {
  int err = 0;
  try {
    err = write(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (err == 0 && ::fsync(fd) != 0) {
    err = errno;
  }
  if (::close(fd) != 0 && err == 0) {
    err = errno;
  }
  return err;
}

// Writes a temporary that its owner removes on failure; removed here too.
void write_in_place(const fs::path& path, const std::function<int(int fd)>& write) {
  const fs::path target = target_of(path);
  const auto [fd, e] = temporaries::get().made(path, false, [&] {
    return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  });
  if (fd < 0) {
    fail(target, std::string("cannot create a file in its folder: ") + std::strerror(e));
  }
  int err = 0;
  try {
    err = write_sync_close(fd, write);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  if (err != 0) {
    ::unlink(path.c_str());
    fail(target, std::string("write failed: ") + std::strerror(err));
  }
}

} // namespace

void write_atomically(const fs::path& given, const std::function<int(int fd)>& write) {
  const fs::path path = normalised(given, "an output file");
  const fs::path folder = folder_of(path);
  require_output_folder(path, folder, "the output folder ");
  struct stat st {};
  check_name_length(path);
  if (temporaries::get().holds(path)) {
    // An output_set's staging file (staged_file::staging()): a temporary
    // already, which the set renames in or removes. Written in place, not
    // through a temporary of the temporary.
    write_in_place(path, write);
    return;
  }
  bool existed = false;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      fail(path, "is a folder; give a file name");
    }
    if (!S_ISREG(st.st_mode)) {
      fail(path, std::string("exists and is ") + kind_of(st.st_mode) +
                     "; shardpoint replaces only regular files");
    }
    refuse_read_only(path, st);
    existed = true;
  }
  auto [fd, temp] = create_temporary_file(path);
  const auto abandon = [&, temp = temp](const std::string& why) {
    ::unlink(temp.c_str());
    temporaries::get().drop(temp);
    fail(path, why);
  };
  if (existed) { // the replaced file's mode, and owner where permitted
    if (::fchmod(fd, st.st_mode & 07777) != 0) {
      const int e = errno;
      ::close(fd);
      abandon(std::string("cannot keep its mode: ") + std::strerror(e));
    }
    if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) {
      [[maybe_unused]] const int ignored = ::fchown(fd, st.st_uid, st.st_gid);
    }
  }
  int err = 0;
  try {
    err = write_sync_close(fd, write);
  } catch (...) {
    ::unlink(temp.c_str());
    temporaries::get().drop(temp);
    throw;
  }
  if (err != 0) {
    abandon(std::string("write failed: ") + std::strerror(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    temporaries::get().drop(temp);
    fail(path, std::string("cannot be written: ") + std::strerror(e));
  }
  temporaries::get().drop(temp);
}

std::size_t file_writer::piece(std::size_t left) const noexcept {
  // In pieces of writeback_bytes at most, so that the disk starts on a
  // large buffer's first piece while the rest is copied.
  return static_cast<std::size_t>(
      std::min<std::uint64_t>(left, writeback_bytes - (written_ - started_)));
}

void file_writer::wrote(std::uint64_t n) noexcept {
  written_ += n;
  if (written_ - started_ >= writeback_bytes) {
#ifdef SYNC_FILE_RANGE_WRITE
    // Errors are the fsync's to report; this only starts the writeback.
    (void)::sync_file_range(fd_, static_cast<off64_t>(started_),
                            static_cast<off64_t>(written_ - started_), SYNC_FILE_RANGE_WRITE);
#endif
    started_ = written_;
  }
}

int file_writer::write(std::string_view bytes) noexcept {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), piece(bytes.size()));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return n < 0 ? errno : EIO;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    wrote(static_cast<std::uint64_t>(n));
  }
  return 0;
}

int file_writer::copy(int from, std::uint64_t offset, std::string_view bytes) noexcept {
  while (!bytes.empty() && offset <= static_cast<std::uint64_t>(INT64_MAX)) {
    auto at = static_cast<off64_t>(offset);
    const ssize_t n = ::copy_file_range(from, &at, fd_, nullptr, piece(bytes.size()), 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      // Not copied by the kernel (EXDEV, EINVAL, ENOSYS, EOPNOTSUPP, ...,
      // or the file shorter than it was): the rest from memory, whose
      // write reports an error that is the output's own (ENOSPC, EIO).
      break;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
    wrote(static_cast<std::uint64_t>(n));
  }
  return write(bytes);
}

void write_file_atomically(const fs::path& path, std::string_view data) {
  write_atomically(path, [&](int fd) { return file_writer(fd).write(data); });
}

// ---- output_set ----------------------------------------------------------------

struct output_set::place {
  enum kind_t { input_file, input_folder, output_file, output_folder } kind;
  fs::path given;
  fs::path canonical;
  std::string what;
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;

  [[nodiscard]] bool is_output() const { return kind == output_file || kind == output_folder; }
  [[nodiscard]] bool is_folder() const { return kind == input_folder || kind == output_folder; }
  [[nodiscard]] std::string named() const { return what + " " + quote(given.string()); }
};

output_set::output_set() = default;

output_set::~output_set() {
  if (committed_) {
    return;
  }
  for (const auto& f : files_) {
    std::error_code ec;
    fs::remove(f->staging_, ec);
    temporaries::get().drop(f->staging_);
  }
  for (const auto& f : folders_) {
    remove_whole(f->staging_);
  }
}

void output_set::check_against_all(const place& p) {
  for (const auto& q : places_) {
    if (!p.is_output() && !q.is_output()) {
      continue;
    }
    const place& out = p.is_output() ? p : q; // the one refused
    const place& other = p.is_output() ? q : p;
    const bool same = out.canonical == other.canonical ||
                      (out.exists && other.exists && out.device == other.device &&
                       out.inode == other.inode && !out.is_folder() && !other.is_folder());
    if (same) {
      fail(out.given,
           "is " + other.named() +
               (other.is_output() ? " as well" : "; shardpoint never writes over what it reads"));
    }
    if (out.kind == place::output_folder && within(other.canonical, out.canonical)) {
      fail(out.given, "holds " + other.named() + "; shardpoint never replaces a folder holding " +
                          (other.is_output() ? "another of its outputs" : "what it reads"));
    }
    if (other.is_folder() && within(out.canonical, other.canonical)) {
      fail(out.given, "lies inside " + other.named() +
                          (other.is_output() ? ", another output"
                                             : ", which shardpoint reads; write it elsewhere"));
    }
    if (out.kind == place::output_file && out.exists && other.kind == place::input_folder) {
      // A hard link to a file inside a folder the command reads (the file
      // itself, inside it, was said above).
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(other.canonical, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_dev == out.device && st.st_ino == out.inode) {
          fail(out.given, "is " + quote(it->path().string()) + " (a hard link), in " +
                              other.named() + "; shardpoint never writes over what it reads");
        }
      }
    }
  }
}

void output_set::input(const fs::path& path, std::string_view what) {
  place p{place::input_file, normalised(path, what), {}, std::string(what)};
  struct stat st {};
  if (::stat(p.given.c_str(), &st) != 0) {
    // Nothing to protect: its reader says it is missing ("no such file"),
    // which no output can be made to say (a folder "holding" it, say).
    return;
  }
  p.canonical = canonical_of(p.given);
  p.exists = true;
  p.device = st.st_dev;
  p.inode = st.st_ino;
  check_against_all(p);
  places_.push_back(std::move(p));
}

void output_set::input_folder(const fs::path& path, std::string_view what) {
  place p{place::input_folder, normalised(path, what), {}, std::string(what)};
  p.canonical = canonical_of(p.given);
  check_against_all(p);
  places_.push_back(std::move(p));
}

staged_file& output_set::file(const fs::path& given, std::string_view what) {
  place p{place::output_file, normalised(given, what), {}, std::string(what)};
  const fs::path& path = p.given;
  auto f = std::make_unique<staged_file>();
  struct stat st {};
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (exists) {
    p.exists = true;
    p.device = st.st_dev;
    p.inode = st.st_ino;
  }
  p.canonical = canonical_of(path);
  check_against_all(p);
  if (const auto& text = given.native(); !text.empty() && text.back() == '/') {
    // 'out/' names a folder: never quietly write a file 'out'.
    fail(given, "ends in '/', a folder's name; give " + std::string(what) + " a file name");
  }
  if (exists) {
    if (S_ISDIR(st.st_mode)) {
      fail(path, "is a folder; give " + std::string(what) + " a file name");
    }
    if (!S_ISREG(st.st_mode)) {
      fail(path, std::string("exists and is ") + kind_of(st.st_mode) +
                     "; shardpoint replaces only regular files");
    }
    refuse_read_only(path, st);
    f->existed_ = true;
    f->mode_ = st.st_mode & 07777;
    f->uid_ = st.st_uid;
    f->gid_ = st.st_gid;
  }
  require_output_folder(path, folder_of(path), "the output folder ");
  check_name_length(path);
  f->path_ = path;
  f->target_ = p.canonical;
  f->what_ = p.what;
  f->staging_ = temporary_name(f->target_);
  temporaries::get().add(f->staging_);
  places_.push_back(std::move(p));
  files_.push_back(std::move(f));
  return *files_.back();
}

staged_folder& output_set::folder(const fs::path& given, std::string_view what, bool force) {
  place p{place::output_folder, normalised(given, what), {}, std::string(what)};
  const fs::path& path = p.given;
  p.canonical = canonical_of(path);
  std::error_code ec;
  const fs::path here = fs::canonical(fs::current_path(ec), ec);
  if (p.canonical == p.canonical.root_path()) {
    fail(path, "is the root folder; give " + p.what + " a folder of its own");
  }
  if (!ec && within(here, p.canonical)) {
    fail(path, std::string(here == p.canonical ? "is" : "holds") + " the current folder; give " +
                   p.what + " a folder of its own");
  }
  check_name_length(path);
  auto f = std::make_unique<staged_folder>();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      fail(path, "is a symbolic link; shardpoint replaces only a real folder (give the folder it "
                 "points to)");
    }
    if (!S_ISDIR(st.st_mode)) {
      fail(path, "exists and is not a folder");
    }
    refuse_read_only(path, st); // replaced by a rename, which its mode does not stop
    f->existed_ = true;
    p.exists = true;
  }
  require_output_folder(path, folder_of(path), "the folder it goes in, ");
  check_against_all(p);
  // What --force replaces is read where the checks above resolved the
  // path, as the rename at commit() goes there (target_), not by its text
  // again: a link on the way retargeted meanwhile is not followed.
  const fs::path& there = p.canonical;
  if (f->existed_ && !fs::is_empty(there, ec)) {
    if (!force) {
      fail(path, "the output folder exists and is not empty (--force replaces a folder "
                 "shardpoint wrote)");
    }
    const auto manifest = read_manifest(there);
    const auto& files = manifest.files;
    if (!files) {
      fail(path, manifest.present
                     ? std::string("holds a manifest (") + manifest_name +
                           ") shardpoint did not write: not its form, or naming a file outside "
                           "the folder; it replaces only its own output folders"
                     : std::string("holds no shardpoint manifest (") + manifest_name +
                           "): shardpoint did not write it, and replaces only its own output "
                           "folders");
    }
    if (const auto stranger = stranger_in(there, *files); !stranger.empty()) {
      fail(path, "holds " + quote(stranger) +
                     ", which shardpoint did not write; it replaces only its own output folders");
    }
    // A file shardpoint wrote and someone changed since is theirs now.
    for (const auto& [name, print] : recorded_fingerprints(there)) {
      struct stat file {};
      if (files->count(name) > 0 && ::lstat((there / name).c_str(), &file) == 0 &&
          (!S_ISREG(file.st_mode) || fingerprint(there / name) != print)) {
        fail(path, "holds " + quote(name) +
                       ", changed since shardpoint wrote it; it replaces only its own output "
                       "folders as it wrote them");
      }
    }
    // A hard link it made to a file of the user's: the same file still, and
    // not its last link (removing that would lose the user's data).
    for (const auto& [name, id] : recorded(there, "links")) {
      struct stat file {};
      if (files->count(name) > 0 && ::lstat((there / name).c_str(), &file) == 0 &&
          (!S_ISREG(file.st_mode) || link_identity(file) != id || file.st_nlink < 2)) {
        fail(path, "holds " + quote(name) +
                       ", which shardpoint linked to a file of yours and is another file now, or "
                       "that file's last link; it replaces only its own output folders");
      }
    }
  }
  f->path_ = path;
  f->target_ = p.canonical;
  f->what_ = p.what;
  f->staging_ = create_temporary_folder(f->target_);
  places_.push_back(std::move(p));
  folders_.push_back(std::move(f));
  return *folders_.back();
}

fs::path staged_folder::file(const std::string& relative) {
  const fs::path rel = fs::path(relative).lexically_normal();
  if (relative.empty() || rel.is_absolute() || rel.has_root_name() ||
      std::any_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; })) {
    fail(path_ / relative, "would lie outside " + what_);
  }
  if (rel.generic_string() == manifest_name) {
    fail(path_ / relative, "is the name of shardpoint's manifest");
  }
  for (const auto& part : rel) {
    if (part.native().size() > name_max) {
      fail(path_ / relative, "a name in it is longer than " + std::to_string(name_max) + " bytes");
    }
  }
  if (rel.has_parent_path()) {
    // Under the watcher's lock: a signal never sees a folder made again
    // after it removed the temporary.
    const std::lock_guard<std::mutex> g(temporaries::get().lock);
    std::error_code ec;
    fs::create_directories(staging_ / rel.parent_path(), ec);
    if (ec) {
      fail(path_ / relative, "cannot be made: " + ec.message());
    }
  }
  files_.push_back(rel.generic_string());
  return staging_ / rel;
}

void output_set::commit() {
  // Everything written first: folders get their manifests.
  for (const auto& f : folders_) {
    write_file_atomically(f->staging_ / manifest_name, manifest_text(f->files_, f->staging_));
  }
  for (const auto& f : files_) {
    struct stat st {};
    if (::lstat(f->staging_.c_str(), &st) != 0) {
      continue; // declared, never written
    }
    if (f->existed_) {
      ::chmod(f->staging_.c_str(), f->mode_);
      if (f->uid_ != ::geteuid() || f->gid_ != ::getegid()) {
        [[maybe_unused]] const int ignored = ::chown(f->staging_.c_str(), f->uid_, f->gid_);
      }
    }
  }
  // Then into place, each in one step; a replaced folder keeps its mode.
  for (const auto& f : folders_) {
    if (struct stat old{}; f->existed_ && ::stat(f->target_.c_str(), &old) == 0) {
      ::chmod(f->staging_.c_str(), old.st_mode & 07777);
    }
    if (!f->existed_) {
      int r = rename2(f->staging_, f->target_, RENAME_NOREPLACE);
      if (r != 0 && no_renameat2(errno)) {
        std::error_code ec;
        r = fs::exists(f->target_, ec) ? (errno = EEXIST, -1)
                                       : ::rename(f->staging_.c_str(), f->target_.c_str());
      }
      if (r != 0) {
        const int e = errno;
        fail(f->path_, e == EEXIST || e == ENOTEMPTY
                           ? "appeared while shardpoint was writing it (another command writing "
                             "the same folder?); it is left as it is"
                           : std::string("cannot be written: ") + std::strerror(e));
      }
      temporaries::get().drop(f->staging_);
      continue;
    }
    fs::path old;
    {
      // The watcher removes temporaries under this lock: it sees either the
      // new output at the temporary's name, or, once swapped, nothing.
      const std::lock_guard<std::mutex> g(temporaries::get().lock);
      if (rename2(f->staging_, f->target_, RENAME_EXCHANGE) == 0) {
        old = f->staging_;
      } else if (no_renameat2(errno)) {
        const fs::path aside = temporary_name(f->target_);
        if (::rename(f->target_.c_str(), aside.c_str()) != 0 ||
            ::rename(f->staging_.c_str(), f->target_.c_str()) != 0) {
          fail(f->path_, std::string("cannot be replaced: ") + std::strerror(errno));
        }
        old = aside;
      } else {
        fail(f->path_, std::string("cannot be replaced: ") + std::strerror(errno));
      }
      // The old folder, now at a temporary's name, stays a temporary until
      // it is gone: a signal from here on removes it, not the new one.
      auto& paths = temporaries::get().paths;
      if (old != f->staging_) {
        paths.push_back(old);
      }
    }
    remove_old_output(old, f->path_);
    temporaries::get().drop(old);
  }
  for (const auto& f : files_) {
    struct stat st {};
    if (::lstat(f->staging_.c_str(), &st) != 0) {
      temporaries::get().drop(f->staging_);
      continue;
    }
    if (::rename(f->staging_.c_str(), f->target_.c_str()) != 0) {
      fail(f->path_, std::string("cannot be written: ") + std::strerror(errno));
    }
    temporaries::get().drop(f->staging_);
  }
  committed_ = true;
}

// ---- signals -------------------------------------------------------------------

void remove_temporaries_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) {
      sigaddset(&set, s);
    }
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set] {
      int sig = 0;
      if (::sigwait(&set, &sig) != 0) {
        return;
      }
      auto& t = temporaries::get();
      t.lock.lock(); // held until the end: nothing is made again after this
      for (const auto& p : t.paths) {
        // The main thread may still be adding files to a temporary folder
        // (it stops at the first that fails once the folder is gone).
        std::error_code ec;
        for (int attempt = 0; attempt < 100; ++attempt) {
          fs::remove_all(p, ec);
          if (!ec) {
            break;
          }
        }
      }
      std::fprintf(stderr, "shardpoint: interrupted (%s); its temporary files are removed\n",
                   ::strsignal(sig));
      std::signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      ::raise(sig);
      std::_Exit(128 + sig);
    }).detach();
  });
}

} // namespace shardpoint::io
