#!/usr/bin/env python3
"""Keeps one comment on a GitHub pull request up to date with checkpoint's summary.

Usage: pr_comment.py NUMBER SUMMARY_FILE

The comment is the one whose body begins with the summary's marker line
(`<!-- checkpoint-ci -->`): updated when there is one, created otherwise. Reads
GITHUB_API_URL (default https://api.github.com), GITHUB_REPOSITORY (owner/name) and
GITHUB_TOKEN. Only the standard library; every request has a timeout.
"""

import json
import os
import sys
import urllib.request

MARKER = "<!-- checkpoint-ci -->"
# GitHub refuses comment bodies over 65,536 characters.
MAX_BODY = 65_000
# Pages of 100 comments looked through for ours.
MAX_PAGES = 20
TIMEOUT = 30


def request(method, url, token, body=None):
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
        return json.loads(response.read() or b"null")


def ours(api, repo, number, token):
    """The id of the comment that holds our marker, or None."""
    for page in range(1, MAX_PAGES + 1):
        url = f"{api}/repos/{repo}/issues/{number}/comments?per_page=100&page={page}"
        comments = request("GET", url, token)
        for comment in comments:
            if str(comment.get("body", "")).startswith(MARKER):
                return comment["id"]
        if len(comments) < 100:
            return None
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pr_comment.py NUMBER SUMMARY_FILE")
    number, path = sys.argv[1], sys.argv[2]
    if not number.isdigit():
        sys.exit(f"not a pull request number: {number!r}")
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = os.environ["GITHUB_REPOSITORY"]
    token = os.environ["GITHUB_TOKEN"]
    with open(path, encoding="utf-8", errors="replace") as file:
        body = file.read()
    if not body.startswith(MARKER):
        body = f"{MARKER}\n{body}"
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY] + "\n\n… (cut; the job summary has all of it)\n"
    existing = ours(api, repo, number, token)
    if existing is None:
        request("POST", f"{api}/repos/{repo}/issues/{number}/comments", token, {"body": body})
    else:
        request("PATCH", f"{api}/repos/{repo}/issues/comments/{existing}", token, {"body": body})


if __name__ == "__main__":
    main()
