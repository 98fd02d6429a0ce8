#include "fetch/http.h"

#include <curl/curl.h>

#include <cctype>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>

namespace minrnn::fetch {
namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// State shared with libcurl's callbacks for one transfer.
struct Transfer {
  const HttpOptions* options = nullptr;
  const BodyReceiver* receive = nullptr;
  CURL* curl = nullptr;
  HttpResponse response;
  std::string reason;  // the last status line's reason phrase ("Not Found")
  bool response_known = false;
  bool stopped = false;
  bool refused = false;
  bool stalled = false;
  int64_t received = 0;
  // When the server last sent anything (a header or body byte): the stall timeout counts from it.
  std::chrono::steady_clock::time_point last_data = std::chrono::steady_clock::now();
  // An exception from the receiver or a callback: it must not unwind through libcurl's C frames,
  // so it is kept here and thrown again once curl_easy_perform has returned.
  std::exception_ptr thrown;
};

// Headers of every answer on the way (redirects included): a status line starts a new answer.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->last_data = std::chrono::steady_clock::now();
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response = HttpResponse{};
    const size_t code_at = line.find(' ');
    const size_t reason_at = code_at == std::string::npos ? code_at : line.find(' ', code_at + 1);
    t->reason = reason_at == std::string::npos ? "" : trim(line.substr(reason_at + 1));
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string value = trim(line.substr(colon + 1));
  if (name == "content-range" && lower(value).rfind("bytes ", 0) == 0) {
    try {
      t->response.range_start = std::stoll(value.substr(6));
    } catch (const std::exception&) {
      t->response.range_start = -1;  // "bytes */123" (a 416's): no start
    }
  } else if (name == "link" && value.find("rel=\"next\"") != std::string::npos) {
    const size_t open = value.find('<'), close = value.find('>');
    if (open != std::string::npos && close != std::string::npos && close > open)
      t->response.next_page = value.substr(open + 1, close - open - 1);
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  try {
    if (!t->response_known) {
      t->response_known = true;
      curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->response.status);
      curl_off_t length = -1;
      curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      t->response.content_length = length;
    }
    if (t->options->should_stop && t->options->should_stop()) {
      t->stopped = true;
      return 0;
    }
    const size_t n = size * count;
    t->last_data = std::chrono::steady_clock::now();
    if (!(*t->receive)(t->response, data, n)) {
      t->refused = true;
      return 0;  // CURLE_WRITE_ERROR
    }
    t->received += int64_t(n);
    return n;
  } catch (...) {
    t->thrown = std::current_exception();
    return 0;
  }
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  try {
    if (t->options->on_tick) t->options->on_tick();
    if (t->options->should_stop && t->options->should_stop()) {
      t->stopped = true;
      return 1;  // CURLE_ABORTED_BY_CALLBACK
    }
    // Our own clock rather than CURLOPT_LOW_SPEED_TIME, whose rate averages the last ~5 s and so
    // notices a silent server only seconds after the timeout.
    const auto silent = std::chrono::steady_clock::now() - t->last_data;
    if (silent > std::chrono::seconds(t->options->stall_timeout_s)) {
      t->stalled = true;
      return 1;
    }
    return 0;
  } catch (...) {
    t->thrown = std::current_exception();
    return 1;
  }
}

// One line for what went wrong; `transient` says whether another try may go better.
std::string describe_failure(CURLcode code, const char* detail, const Transfer& t,
                             bool* transient) {
  const std::string more = detail[0] ? std::string(" (") + detail + ")" : "";
  *transient = false;
  switch (code) {
    case CURLE_HTTP_RETURNED_ERROR: {
      long status = 0;
      curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &status);
      *transient = status >= 500 || status == 429;
      return "HTTP " + std::to_string(status) + (t.reason.empty() ? "" : " " + t.reason);
    }
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return "cannot resolve the host" + more;
    case CURLE_COULDNT_CONNECT:
      return "cannot connect: connection refused or unreachable" + more;
    case CURLE_OPERATION_TIMEDOUT:  // connecting took longer than connect_timeout_s
      *transient = true;
      return "timed out" + more;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      *transient = true;
      return "the connection was cut after " + std::to_string(t.received) + " bytes" + more;
    default:
      return std::string(curl_easy_strerror(code)) + more;
  }
}

}  // namespace

TransferResult http_get(const std::string& url, int64_t range_start, const HttpOptions& options,
                        const BodyReceiver& receive) {
  global_init_once();
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  TransferResult result;
  if (!curl) {
    result.error = "libcurl could not start a transfer";
    return result;
  }
  Transfer t;
  t.options = &options;
  t.receive = &receive;
  t.curl = curl.get();
  char detail[CURL_ERROR_SIZE] = "";
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);  // the hub answers a file with a redirect
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);  // >= 400: an error, its body never written
  curl_easy_setopt(c, CURLOPT_USERAGENT, "minrnn/0.1 libcurl");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  const std::string range = std::to_string(range_start) + "-";
  if (range_start > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  const CURLcode code = curl_easy_perform(c);
  if (t.thrown) std::rethrow_exception(t.thrown);
  result.response = t.response;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &result.response.status);
  if (code == CURLE_OK) {
    result.complete = true;
    return result;
  }
  if (t.stalled) {
    result.transient = true;
    result.error = "timed out: no data for " + std::to_string(options.stall_timeout_s) + " s";
    return result;
  }
  if (t.stopped || code == CURLE_ABORTED_BY_CALLBACK) {
    result.stopped = true;
    result.error = "stopped";
    return result;
  }
  if (t.refused) {
    result.receiver_refused = true;
    result.error = "refused by the receiver";
    return result;
  }
  result.error = describe_failure(code, detail, t, &result.transient);
  return result;
}

std::string http_get_text(const std::string& url, const HttpOptions& options,
                          std::string* next_page, size_t max_bytes) {
  std::string text;
  bool too_long = false;
  const TransferResult r =
      http_get(url, 0, options, [&](const HttpResponse&, const char* data, size_t n) {
        if (text.size() + n > max_bytes) return !(too_long = true);
        text.append(data, n);
        return true;
      });
  if (r.stopped) throw StopRequested("stopped while reading " + url);
  if (too_long) {
    throw FetchError("cannot read " + url + ": the answer is longer than " +
                     std::to_string(max_bytes) + " bytes");
  }
  if (!r.complete) throw FetchError("cannot read " + url + ": " + r.error);
  if (next_page) *next_page = r.response.next_page;
  return text;
}

}  // namespace minrnn::fetch
