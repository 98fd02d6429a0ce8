#include "fetch/checksum.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace minrnn::fetch {

std::string describe(HashKind kind, const std::string& hex) {
  return (kind == HashKind::kSha256 ? "sha256 " : "git blob sha1 ") + hex;
}

Hasher::Hasher(HashKind kind, int64_t size) : kind_(kind), size_(size), ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
  reset();
}

Hasher::~Hasher() {
  EVP_MD_CTX_free(ctx_);
}

void Hasher::reset() {
  const EVP_MD* md = kind_ == HashKind::kSha256 ? EVP_sha256() : EVP_sha1();
  if (EVP_DigestInit_ex(ctx_, md, nullptr) != 1)
    throw std::runtime_error("OpenSSL: cannot start a digest");
  if (kind_ == HashKind::kGitBlobSha1) {
    const std::string header = "blob " + std::to_string(size_);
    update(header.c_str(), header.size() + 1);  // with its terminating NUL, as git hashes it
  }
}

void Hasher::update(const void* data, size_t n) {
  if (EVP_DigestUpdate(ctx_, data, n) != 1)
    throw std::runtime_error("OpenSSL: digest update failed");
}

std::string Hasher::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_, digest, &length) != 1)
    throw std::runtime_error("OpenSSL: digest failed");
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

void hash_file_prefix(const std::string& path, int64_t length, Hasher& hasher) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::vector<char> buffer(1 << 20);
  int64_t done = 0;
  while (length < 0 || done < length) {
    const size_t want = length < 0
                            ? buffer.size()
                            : size_t(std::min<int64_t>(int64_t(buffer.size()), length - done));
    const ssize_t n = ::read(fd, buffer.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error("cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    hasher.update(buffer.data(), size_t(n));
    done += n;
  }
  ::close(fd);
  if (length >= 0 && done < length) {
    throw std::runtime_error("cannot read " + path + ": it ended after " + std::to_string(done) +
                             " of " + std::to_string(length) + " bytes");
  }
}

std::string sha256_hex(std::string_view bytes) {
  Hasher h(HashKind::kSha256);
  h.update(bytes.data(), bytes.size());
  return h.hex_digest();
}

std::string file_checksum(const std::string& path, HashKind kind) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error("cannot read " + path + ": " + ec.message());
  Hasher h(kind, int64_t(size));
  hash_file_prefix(path, -1, h);
  return h.hex_digest();
}

}  // namespace minrnn::fetch
