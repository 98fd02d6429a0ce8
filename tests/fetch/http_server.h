// A small HTTP/1.1 file server for the download tests, on 127.0.0.1 (never the internet): serves a
// directory, honours `Range: bytes=N-` with 206, and has knobs for what real servers do to a
// download: cut the connection after N bytes, go silent, trickle, answer 404 / 403, ignore the
// Range, redirect, or answer anything at all (raw_answers). Every request is logged (method,
// target, Range header) for the tests to check. One thread accepts; each connection gets its own
// thread; every answer closes its connection.
//
//   HttpServer server(dir.path);              // serves dir/<path> at server.url("/<path>")
//   server.cut_next_file_after(1000);         // the next file answer stops after 1000 bytes
//   ... download ...
//   EXPECT_EQ(server.requests()[1].range, "bytes=1000-");
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace minrnn::testing {

class HttpServer {
 public:
  struct Request {
    std::string method, target, range;  // range: the Range header's value, "" when none
  };

  explicit HttpServer(std::filesystem::path root) : root_(std::move(root)) {
    // A proxy from the environment must not carry these requests (children inherit this).
    ::setenv("no_proxy", "127.0.0.1", 1);
    ::setenv("NO_PROXY", "127.0.0.1", 1);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // any free port
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("test HTTP server: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~HttpServer() {
    stop_ = true;
    acceptor_.join();
    ::close(listen_fd_);
    std::vector<std::thread> connections;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      connections.swap(connections_);
    }
    for (auto& t : connections) t.join();  // each sees stop_ within 50 ms
  }
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // The next answer with a file body (of `path`, when given) sends `bytes` of it, then closes the
  // connection (stall: keeps it open and silent instead, until the client gives up).
  void cut_next_file_after(int64_t bytes, bool stall = false, const std::string& path = "") {
    std::lock_guard<std::mutex> lock(mutex_);
    cut_after_ = bytes;
    stall_ = stall;
    cut_path_ = path;
  }
  // Body bytes per second for every answer from now on (0: as fast as it goes).
  void set_bytes_per_second(int64_t rate) { rate_ = rate; }
  // Answers `status` for this path (no query), e.g. 404 or 403.
  void answer(const std::string& path, int status) {
    std::lock_guard<std::mutex> lock(mutex_);
    statuses_[path] = status;
  }
  // Serves `body` at exactly this target (path and query), e.g. a tree-API listing; with
  // `next_page`, a Link header to it (rel="next"), as the hub pages a long listing.
  void add_document(const std::string& target, std::string body,
                    const std::string& next_page = "") {
    std::lock_guard<std::mutex> lock(mutex_);
    documents_[target] = std::move(body);
    next_pages_[target] = next_page;
  }
  // 302 from `path` to `location` (the hub sends its files from elsewhere).
  void redirect(const std::string& path, const std::string& location) {
    std::lock_guard<std::mutex> lock(mutex_);
    redirects_[path] = location;
  }
  void ignore_range(bool ignore) { ignore_range_ = ignore; }
  // The next requests for `path` (no query) get these answers, one each, sent verbatim (status
  // line, headers, body) at the set rate, then the connection closes: what the knobs above do not
  // make (a 204, a 302 without a Location, a body without a length, a Retry-After, a header that
  // trickles). Once they are used up, the path is served as before.
  void raw_answers(const std::string& path, std::vector<std::string> answers) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& a : answers) raw_[path].push_back(std::move(a));
  }

  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  // The requests for one path (query ignored).
  std::vector<Request> requests_for(const std::string& path) const {
    std::vector<Request> found;
    for (const auto& r : requests())
      if (r.target.substr(0, r.target.find('?')) == path) found.push_back(r);
    return found;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mutex_);
      connections_.emplace_back([this, fd] {
        serve(fd);
        ::close(fd);
      });
    }
  }

  // The request head, up to the blank line; "" when the client sends none.
  std::string read_head(int fd) {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 && !stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return "";
      head.append(buf, size_t(n));
    }
    return head;
  }

  bool send_all(int fd, const char* data, size_t n) {
    while (n > 0) {
      const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);  // a client gone is no SIGPIPE here
      if (w <= 0) return false;
      data += w, n -= size_t(w);
    }
    return true;
  }

  void send_head(int fd, int status, const std::string& reason, const std::string& headers) {
    const std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n" +
                             headers + "Connection: close\r\n\r\n";
    send_all(fd, head.data(), head.size());
  }

  void serve(int fd) {
    std::istringstream in(read_head(fd));
    Request req;
    in >> req.method >> req.target;
    if (req.method.empty()) return;
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line) && line != "\r") {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (name == "range") req.range = line.substr(colon + 2, line.size() - colon - 3);  // no \r
    }
    const std::string path = req.target.substr(0, req.target.find('?'));
    std::string document, next_page, location, raw;
    bool has_document = false;
    int status = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requests_.push_back(req);
      if (!raw_[path].empty()) {
        raw = std::move(raw_[path].front());
        raw_[path].erase(raw_[path].begin());
      }
      has_document = documents_.count(req.target) > 0;
      if (has_document) document = documents_[req.target], next_page = next_pages_[req.target];
      if (redirects_.count(path)) location = redirects_[path];
      if (statuses_.count(path)) status = statuses_[path];
    }
    if (!raw.empty()) {
      send_paced(fd, raw.data(), int64_t(raw.size()));
    } else if (status != 0) {
      const std::string body = "status " + std::to_string(status) + "\n";
      send_head(fd, status,
                status == 404   ? "Not Found"
                : status == 403 ? "Forbidden"
                                : "Error",
                "Content-Length: " + std::to_string(body.size()) + "\r\n");
      send_all(fd, body.data(), body.size());
    } else if (!location.empty()) {
      send_head(fd, 302, "Found", "Location: " + location + "\r\nContent-Length: 0\r\n");
    } else if (has_document) {
      const std::string link =
          next_page.empty() ? "" : "Link: <" + next_page + ">; rel=\"next\"\r\n";
      send_head(fd, 200, "OK",
                link + "Content-Length: " + std::to_string(document.size()) + "\r\n");
      send_paced(fd, document.data(), int64_t(document.size()));
    } else {
      serve_file(fd, path, req.range);
    }
  }

  void serve_file(int fd, const std::string& path, const std::string& range) {
    const std::filesystem::path file = root_ / path.substr(1);
    std::error_code ec;
    if (path.find("..") != std::string::npos || !std::filesystem::is_regular_file(file, ec)) {
      const std::string body = "no such file\n";
      send_head(fd, 404, "Not Found", "Content-Length: " + std::to_string(body.size()) + "\r\n");
      send_all(fd, body.data(), body.size());
      return;
    }
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int64_t size = int64_t(bytes.size());
    int64_t start = 0;
    if (!ignore_range_ && range.rfind("bytes=", 0) == 0) start = std::stoll(range.substr(6));
    if (start >= size && start > 0) {
      send_head(fd, 416, "Range Not Satisfiable",
                "Content-Range: bytes */" + std::to_string(size) + "\r\nContent-Length: 0\r\n");
      return;
    }
    if (start > 0) {
      send_head(fd, 206, "Partial Content",
                "Content-Range: bytes " + std::to_string(start) + "-" + std::to_string(size - 1) +
                    "/" + std::to_string(size) +
                    "\r\nContent-Length: " + std::to_string(size - start) + "\r\n");
    } else {
      send_head(fd, 200, "OK", "Content-Length: " + std::to_string(size) + "\r\n");
    }
    send_body(fd, path, bytes, start);
  }

  // `n` bytes at the set rate: a trickle sends a twentieth of its rate every 50 ms.
  bool send_paced(int fd, const char* data, int64_t n) {
    for (int64_t at = 0; at < n && !stop_;) {
      const int64_t rate = rate_;
      const int64_t chunk =
          std::min<int64_t>(n - at, rate > 0 ? std::max<int64_t>(1, rate / 20) : 65536);
      if (!send_all(fd, data + at, size_t(chunk))) return false;
      at += chunk;
      if (rate > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  // bytes[start:], honouring the cut and the rate.
  void send_body(int fd, const std::string& path, const std::string& bytes, int64_t start) {
    int64_t cut = -1;
    bool stall = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cut_path_.empty() || cut_path_ == path) std::swap(cut, cut_after_);
      stall = stall_;
    }
    const int64_t end =
        cut >= 0 ? std::min<int64_t>(int64_t(bytes.size()), start + cut) : int64_t(bytes.size());
    if (!send_paced(fd, bytes.data() + start, end - start)) return;
    while (cut >= 0 && stall && !stop_) {  // silent until the client hangs up
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) {
        char c;
        if (::recv(fd, &c, 1, 0) <= 0) return;
      }
    }
  }

  std::filesystem::path root_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> rate_{0};
  std::atomic<bool> ignore_range_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<std::thread> connections_;
  std::vector<Request> requests_;
  std::map<std::string, std::string> documents_, next_pages_, redirects_;
  std::map<std::string, int> statuses_;
  std::map<std::string, std::vector<std::string>> raw_;
  int64_t cut_after_ = -1;
  bool stall_ = false;
  std::string cut_path_;
};

}  // namespace minrnn::testing
