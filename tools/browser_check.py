"""Open docs/widgets_demo.ipynb in a real JupyterLab in Chromium, run it, click and slide, check the DOM,
and save screenshots to docs/screenshots/.

    python tools/browser_check.py            # needs jupyterlab, playwright and /usr/bin/chromium

Playwright drives the system Chromium (``apt-get install chromium``); its own browser download is not
needed. Exits non-zero if a check fails. Not part of CI.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "docs/widgets_demo.ipynb"
SHOTS = ROOT / "docs" / "screenshots"
# widget output order in the notebook -> screenshot name
WIDGETS = ["threads", "tiling", "banks", "coalescing", "divergence", "heatmap", "streams", "occupancy"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(port, token):
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}", "--ServerApp.allow_root=True"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("JupyterLab did not start")


class Checks:
    def __init__(self):
        self.failed = []

    def __call__(self, ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            self.failed.append(what)


def run(page, port, token, check):
    page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    no_news = page.get_by_role("button", name="No", exact=True)
    if no_news.count():
        no_news.first.click()             # JupyterLab's "get notified about news?" toast
    page.click(".jp-Notebook")
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    views = page.locator(".cudalab-svg svg")
    deadline = time.time() + 300
    while views.count() < len(WIDGETS) and time.time() < deadline:
        time.sleep(1)
    check(views.count() == len(WIDGETS), f"{views.count()} live widgets drawn (want {len(WIDGETS)})")
    outputs = page.locator(".jp-OutputArea-output:has(.cudalab-svg)")

    def shot(i, name):
        out = outputs.nth(i)
        out.scroll_into_view_if_needed()
        time.sleep(0.3)
        out.screenshot(path=str(SHOTS / f"{name}.png"))

    # thread hierarchy: click block (1, 1) then thread 40 = threadIdx (8, 2)
    threads = outputs.nth(0)
    threads.locator("[data-pick='b:5']").click()
    threads.locator("[data-pick='t:40']").click()
    page.wait_for_function("() => document.querySelector('.jp-OutputArea-output .widget-html-content')"
                           " && [...document.querySelectorAll('.widget-html-content')]"
                           ".some(e => e.textContent.includes('(8, 2, 0)'))", timeout=30_000)
    text = threads.inner_text()
    check("(8, 2, 0)" in text and "(1, 1, 0)" in text, "clicking block 5 then thread 40 shows threadIdx (8, 2, 0), "
          "blockIdx (1, 1, 0)")
    check("C[18][24]" in text, "the thread's store C[18][24] is listed")
    shot(0, "threads")

    # tiling: move the phase slider one step right
    tiling = outputs.nth(1)
    handle = tiling.locator(".noUi-handle").first
    handle.click()
    page.keyboard.press("ArrowRight")
    tiling.locator("text=phase 2 of 9").wait_for(timeout=30_000)
    check("copied A[0:16, 16:32]" in tiling.inner_text() or "phase 2 of 9" in tiling.inner_text(),
          "phase slider moved to phase 2")
    handle.click()
    page.keyboard.press("ArrowRight")
    tiling.locator("text=phase 3 of 9").wait_for(timeout=30_000)
    check("A[0:16, 16:32]" in tiling.inner_text(), "phase 3 copies the second tile, A[0:16, 16:32]")
    shot(1, "tiling")

    banks = outputs.nth(2)
    check("32-way bank conflict" in banks.inner_text(), "bank widget names the 32-way conflict")
    shot(2, "banks")
    banks.locator("input[type=checkbox]").check()
    banks.locator("text=no bank conflict").first.wait_for(timeout=30_000)
    check(True, "pad rows removes the conflict")
    shot(2, "banks_padded")

    check("32 sectors of 32 bytes in 32 lines" in outputs.nth(3).inner_text(),
          "coalescing widget: a stride-32 float load touches 32 sectors in 32 lines")
    shot(3, "coalescing")
    div = outputs.nth(4)
    check("2 paths" in div.inner_text(), "divergence widget: 2 paths")
    div.locator("[data-pick='w:3']").click()
    div.locator("text=warp 1 of block 1").wait_for(timeout=30_000)
    check(True, "clicking a warp bar picks warp 1 of block 1")
    shot(4, "divergence")
    for i in range(5, 8):
        shot(i, WIDGETS[i])
    check("limited by registers" in outputs.nth(7).inner_text(), "occupancy widget names registers as the limit")


def main():
    SHOTS.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    port = free_port()
    lab = start_lab(port, token)
    check = Checks()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            try:
                run(page, port, token, check)
            finally:
                page.screenshot(path=str(SHOTS / "notebook.png"))
                browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
    print(f"{len(check.failed)} checks failed" if check.failed else "all checks passed")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
