// The checksums a download is verified with, computed by OpenSSL's EVP digests: a file's sha256
// (D4RL's published table, the hub's LFS files) or its git blob id (sha1 of "blob <size>\0" and
// the bytes: how the hub names the small files it keeps in git, such as Minari's metadata.json).
//
//   fetch::Hasher h(fetch::HashKind::kSha256);
//   h.update(buffer, n);                 // as the bytes arrive
//   std::string hex = h.hex_digest();    // lowercase hex
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

typedef struct evp_md_ctx_st EVP_MD_CTX;  // <openssl/evp.h>, kept out of this header

namespace minrnn::fetch {

enum class HashKind { kSha256, kGitBlobSha1 };

struct Checksum {
  HashKind kind = HashKind::kSha256;
  std::string hex;  // lowercase
};

// "sha256 01aa..." / "git blob sha1 ce01...": how messages name an expected or computed value.
std::string describe(HashKind kind, const std::string& hex);

class Hasher {
 public:
  // `size` is the whole file's length: a git blob id hashes it first.
  explicit Hasher(HashKind kind, int64_t size = 0);
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(const void* data, size_t n);
  std::string hex_digest();  // ends this hash; call reset() to start another
  void reset();              // as freshly constructed
  HashKind kind() const { return kind_; }

 private:
  HashKind kind_;
  int64_t size_;
  EVP_MD_CTX* ctx_ = nullptr;
};

// The first `length` bytes of a file (all of it when length < 0) into `hasher`. Throws
// std::runtime_error naming the file when it cannot be read or is shorter.
void hash_file_prefix(const std::string& path, int64_t length, Hasher& hasher);

// One-shot helpers.
std::string sha256_hex(std::string_view bytes);
std::string file_checksum(const std::string& path, HashKind kind);

}  // namespace minrnn::fetch
