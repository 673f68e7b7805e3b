"""gluon.utils.download and check_sha1 (MXNet 1.x's), against a local HTTP server: the
file is written whole or not at all, existing files are kept unless told, a SHA-1
mismatch is a failed attempt, and retries are counted."""

import hashlib
import http.server
import os
import threading
import warnings

import pytest

from runtime.gluon import utils

requests = pytest.importorskip("requests")

CONTENT = b"ndrt download test\n" * 200


class _Handler(http.server.BaseHTTPRequestHandler):
    calls = 0

    def do_GET(self):
        type(self).calls += 1
        if self.path == "/data.bin":
            self.send_response(200)
            self.send_header("Content-Length", str(len(CONTENT)))
            self.end_headers()
            self.wfile.write(CONTENT)
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, *args):
        """Quiet: the server's request log would interleave with pytest's output."""


@pytest.fixture
def server():
    _Handler.calls = 0
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_download_into_a_folder_names_the_file_after_the_url(server, tmp_path):
    path = utils.download(f"{server}/data.bin", path=str(tmp_path))
    assert path == os.path.join(str(tmp_path), "data.bin")
    assert open(path, "rb").read() == CONTENT
    assert os.listdir(tmp_path) == ["data.bin"]      # no temporary file left


def test_an_existing_file_is_kept_unless_overwrite_or_its_hash_differs(server, tmp_path):
    target = tmp_path / "data.bin"
    target.write_bytes(b"old")
    utils.download(f"{server}/data.bin", path=str(target))
    assert target.read_bytes() == b"old" and _Handler.calls == 0
    good = hashlib.sha1(CONTENT).hexdigest()
    utils.download(f"{server}/data.bin", path=str(target), sha1_hash=good)
    assert target.read_bytes() == CONTENT and _Handler.calls == 1
    target.write_bytes(b"old")
    utils.download(f"{server}/data.bin", path=str(target), overwrite=True)
    assert target.read_bytes() == CONTENT and _Handler.calls == 2


def test_check_sha1_compares_the_digest_prefix(tmp_path):
    f = tmp_path / "x"
    f.write_bytes(CONTENT)
    digest = hashlib.sha1(CONTENT).hexdigest()
    assert utils.check_sha1(str(f), digest)
    assert utils.check_sha1(str(f), digest[:8])
    assert not utils.check_sha1(str(f), "0" * 40)


def test_a_hash_mismatch_is_retried_then_raised_and_leaves_no_file(server, tmp_path):
    target = tmp_path / "data.bin"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(UserWarning, match="does not match sha1_hash"):
            utils.download(f"{server}/data.bin", path=str(target), sha1_hash="0" * 40,
                           retries=2)
    assert _Handler.calls == 3
    assert os.listdir(tmp_path) == []


def test_an_http_error_status_raises_naming_the_url(server, tmp_path):
    with pytest.raises(RuntimeError, match=r"missing\.bin \(HTTP status 404\)"):
        utils.download(f"{server}/missing.bin", path=str(tmp_path / "m"), retries=0)
    assert os.listdir(tmp_path) == []


def test_unverified_ssl_warns_and_bad_retries_are_refused(server, tmp_path):
    with pytest.warns(UserWarning, match="^Unverified HTTPS request"):
        utils.download(f"{server}/data.bin", path=str(tmp_path), verify_ssl=False)
    with pytest.raises(ValueError, match=r"retries must be an integer >= 0 \(got -1\)"):
        utils.download(f"{server}/data.bin", path=str(tmp_path), retries=-1)
