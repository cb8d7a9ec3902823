#!/usr/bin/env python3
"""Web gallery first paint with many photos: seeds ROWS photo rows (bench/manifest-seed.sql) into a
fresh database, serves them with galleryd, and loads / in headless Chromium RUNS times, reporting
the time from navigation start until the grid shows its first page of cells (laid out from
aspectRatio, painted with dominantColor), and until the first page's requests finished. The page
is logged in as the first admin (its session checked with /users/me before the first page).

Usage: bench/web.py --binary .build/release/galleryd --database-url URL [--rows 100000] [--runs 5]
(the Python of scripts/browser-deps.sh, which installs Chromium and selenium)."""
import argparse, os, shutil, statistics, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "Browser"))
import gallery_test as harness
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

parser = argparse.ArgumentParser()
parser.add_argument("--binary", required=True)
parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
parser.add_argument("--rows", type=int, default=100_000)
parser.add_argument("--runs", type=int, default=5)
args = parser.parse_args()

server = harness.Server(args.binary, args.database_url)
try:
    url = harness.database_url(args.database_url, server.db)
    subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-v", f"rows={args.rows}", "-f", "bench/manifest-seed.sql"],
                   check=True, stdout=subprocess.DEVNULL)
    live = server.api("/classes/Photo", {"count": 1, "limit": 0})["count"]
    # The page needs a session (the app id alone reads nothing): the first admin, made as `make run`
    # makes it, takes the seeded (ownerless) rows; its token is put where the page keeps it.
    server.create_admin(args.binary, harness.ADMIN_PASSWORD)
    token = server.api("/login", headers={}, body={"username": "admin", "password": harness.ADMIN_PASSWORD})["sessionToken"]
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"]:
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    paints, firsts = [], []
    try:
        # The grid marks when its first cells are in the DOM; a requestAnimationFrame after that is the paint.
        probe = """const done = arguments[0];
          const check = () => { if (document.querySelectorAll('#grid .tile').length >= 30)
            requestAnimationFrame(() => done(performance.now())); else setTimeout(check, 5); };
          check();"""
        driver.get(server.url + "/web/config.json")
        driver.execute_script("localStorage.setItem('galleryd.sessionToken', arguments[0])", token)
        for run in range(args.runs + 1):
            driver.get("about:blank")
            driver.get(server.url + "/")
            painted = driver.execute_async_script(probe)
            api = driver.execute_script("""return performance.getEntriesByType('resource')
              .filter(e => e.name.includes('/parse/classes/Photo')).map(e => e.responseEnd)[0] || 0""")
            if run > 0:  # the first load warms caches (the database's, the browser's module cache stays cold: no-cache)
                paints.append(painted)
                firsts.append(api)
    finally:
        driver.quit()
    print(f"web first paint, {live} live photos, {args.runs} loads: grid painted at "
          f"median {statistics.median(paints):.0f} ms (max {max(paints):.0f}); first page answered at "
          f"median {statistics.median(firsts):.0f} ms after navigation start")
finally:
    server.stop()
