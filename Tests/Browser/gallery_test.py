#!/usr/bin/env python3
"""The web gallery in a real browser: headless Chromium driven by Selenium against a real galleryd
(built binary, real PostgreSQL database, in-process workers). Walks what a person does: the first
admin made as `make run` makes it (`galleryd users create admin --admin --password-file`), the login
form (the app id alone reads nothing), load, scroll to page 3, search, open a preview, upload a photo
and watch it become ready (live query), reorder a gallery, trash and restore. Then, on the same
server, more accounts: two users made with the master key, logout and the login form, a wrong password, alice's own library (an upload that becomes ready), logout, bob who does not see
alice's photo, a session ended by the server (209), login throttling (429), and sign-up on a second
instance with signup_open. Any step that does not happen within its timeout fails the run (exit status 1).

Usage: gallery_test.py --binary .build/debug/galleryd --database-url URL [--out bench/out] [--docs docs]
The database URL names an existing cluster; a fresh database is created in it and dropped after.
"""
import argparse, base64, os, shutil, subprocess, sys, time, traceback

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import gallery_browser
from gallery_browser import SEED, Page, Server, database_url, psql

PHOTOS = 75          # three pages of 30 (the grid's page size), the last one partial
SUNSET = 5           # photos whose title contains "sunset"
ADMIN_PASSWORD = "the admin's passphrase"


def first_admin(page, server, binary):
    """Phase 1, the first admin: seed, login form, load, page 3, search, preview, uploads (JPEG, HEIC
    and PNG, a dropped WebP), gallery reorder, trash and restore, live."""
    driver = page.driver
    page.step = "seed"
    # The app id alone reads nothing: the first admin (as `make run` makes it) uploads the photos.
    server.create_admin(binary, ADMIN_PASSWORD)
    anonymous = server.api("/classes/Photo", {"count": 1, "limit": 0}, headers={})
    assert anonymous["count"] == 0, f"the app id alone reads {anonymous}"
    admin_token = server.api("/login", headers={}, body={"username": "admin", "password": ADMIN_PASSWORD})["sessionToken"]
    # Seeded from the page: an API answer (config.json) is no document and may connect nowhere
    # (Content-Security-Policy: default-src 'none').
    driver.get(server.url + "/")
    assert driver.execute_async_script(SEED, PHOTOS, SUNSET, admin_token) == "ok"
    deadline = time.time() + 120
    while server.api("/classes/Photo", {"where": {"status": "ready"}, "count": 1, "limit": 0})["count"] < PHOTOS:
        assert time.time() < deadline, "seeded photos never became ready"
        time.sleep(0.5)

    page.step = "load: login form"
    driver.get(server.url + "/")
    page.wait().until(lambda d: page.login_form().is_displayed())
    assert not driver.find_element(By.ID, "grid").is_displayed(), "the library shows before a login"
    page.step = "load"
    page.log_in("admin", ADMIN_PASSWORD)
    page.wait().until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    page.wait().until(lambda d: len(page.tiles()) >= 30)
    # The page subscribes to Photo through the LiveQuery WebSocket (web/live.js).
    page.wait().until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "true")
    page.idle()
    pages = int(driver.find_element(By.ID, "grid").get_attribute("data-pages"))
    assert pages < 3 and len(page.tiles()) == 30 * pages, f"{len(page.tiles())} tiles in {pages} pages before any scrolling"
    first = driver.execute_script("""const t = document.querySelector('#grid .tile');
        return {id: t.dataset.id, alt: t.querySelector('img').alt, background: t.style.background,
                srcset: t.querySelector('img').srcset, placeholder: t.style.backgroundImage}""")
    newest = server.api("/classes/Photo", {"order": "-createdAt,-objectId", "limit": 1})["results"][0]
    assert first["id"] == newest["objectId"], "grid does not start with the newest photo"
    assert first["alt"] == newest["title"], "alt is not the title"
    assert first["background"], "no dominantColor placeholder"
    # srcset from the record's display sizes (keys=sizes): t … b with their widths, signed size URLs.
    candidates = [c.strip().split(" ") for c in first["srcset"].split(",")]
    assert len(candidates) >= 4, f"srcset has too few sizes: {first['srcset']!r}"
    assert all(len(c) == 2 and c[1].endswith("w") for c in candidates), f"srcset without widths: {first['srcset']!r}"
    assert any(f"/sizes/{first['id']}/s.jpg" in c[0] for c in candidates), f"no 240 px size in srcset: {first['srcset']!r}"
    assert first["placeholder"].startswith('url("data:image/png'), "no ThumbHash placeholder painted"
    # Justified: every full row is as wide as the grid (within rounding).
    grid_width = driver.execute_script("return document.getElementById('grid').clientWidth")
    widths = driver.execute_script("""return [...document.querySelectorAll('#grid .row')].slice(0, -1)
        .map(r => [...r.children].reduce((s, c) => s + c.getBoundingClientRect().width, 0) + 4 * (r.children.length - 1))""")
    assert widths and all(abs(w - grid_width) <= len(widths) + 8 for w in widths), f"rows not justified: {widths} vs {grid_width}"
    page.wait().until(lambda d: d.execute_script("return [...document.querySelectorAll('#grid img')].slice(0, 6).every(i => i.complete && i.naturalWidth > 0)"))
    page.shot("grid")

    page.step = "scroll to page 3"
    for _ in range(40):
        if driver.find_element(By.ID, "grid").get_attribute("data-pages") == "3":
            break
        driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
        time.sleep(0.3)
    page.wait().until(lambda d: d.find_element(By.ID, "grid").get_attribute("data-pages") == "3")
    page.wait().until(lambda d: len(page.tiles()) == PHOTOS)
    ids = driver.execute_script("return [...document.querySelectorAll('#grid .tile')].map(t => t.dataset.id)")
    assert len(set(ids)) == PHOTOS, "a photo was repeated or skipped while paging"
    page.shot("page3")
    driver.execute_script("window.scrollTo(0, 0)")

    page.step = "search"
    search = driver.find_element(By.ID, "search")
    search.send_keys("sunset")
    page.wait().until(lambda d: len(page.tiles()) == SUNSET)
    assert all("Sunset" in label for label in driver.execute_script(
        "return [...document.querySelectorAll('#grid .tile')].map(t => t.getAttribute('aria-label'))"))
    page.shot("search")
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)
    page.wait().until(lambda d: len(page.tiles()) >= 30)

    page.step = "preview"
    page.idle()
    page.click_tile(0)
    dialog = driver.find_element(By.ID, "preview")
    page.wait().until(lambda d: dialog.is_displayed())
    image = dialog.find_element(By.TAG_NAME, "img")
    assert "/previews/" in image.get_attribute("src"), "preview image is not the preview"
    page.wait().until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", image))
    page.shot("preview")
    opened = dialog.get_attribute("data-id")
    driver.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    page.wait().until(lambda d: dialog.get_attribute("data-id") == ids[1])
    assert opened == ids[0]
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    page.wait().until(lambda d: not dialog.is_displayed())
    page.wait(5).until(lambda d: d.switch_to.active_element.get_attribute("data-id") == ids[1])  # focus back on the tile

    page.step = "upload"
    path = page.drawn_jpeg(os.path.join(server.store, "uploaded-by-browser.jpg"), 99, "new")
    driver.find_element(By.ID, "upload-input").send_keys(path)
    page.wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, "#uploads progress"))
    uid = page.ready_tile("uploaded-by-browser")
    assert driver.execute_script("return document.querySelector('#grid .tile').dataset.id") == uid, "the new photo is not first"
    page.shot("uploaded")

    page.step = "upload formats"  # a HEIC and a PNG (#28), made from the JPEG above; the bytes decide
    heic = os.path.join(server.store, "iphone-photo.heic")
    png = os.path.join(server.store, "screenshot.png")
    subprocess.run(["heif-enc", "-q", "80", "-o", heic, path], check=True, capture_output=True)
    subprocess.run(["heif-convert", heic, png], check=True, capture_output=True)
    driver.find_element(By.ID, "upload-input").send_keys(heic + "\n" + png)
    for label, content_type in (("iphone-photo", "image/heic"), ("screenshot", "image/png")):
        pid = page.ready_tile(label)
        stored = server.api(f"/classes/Photo/{pid}")["contentType"]
        assert stored == content_type, f"{label} is stored as {stored}, not {content_type}"
        # Seen in the grid: the tile's thumbnail (a JPEG made from the HEIC or PNG) has loaded.
        page.wait().until(lambda d: d.execute_script(
            "const i = document.querySelector(`#grid .tile[data-id=\"${arguments[0]}\"] img`);"
            " return !!i && i.complete && i.naturalWidth > 0", pid))
    page.shot("uploaded-formats")

    page.step = "drop a WebP"  # drag and drop onto the page (#28): a WebP named and typed as a JPEG; the bytes decide
    webp = os.path.join(server.store, "shared-image.jpg")
    subprocess.run(["cwebp", "-quiet", "-q", "80", png, "-o", webp], check=True, capture_output=True)
    with open(webp, "rb") as f:
        webp_b64 = base64.b64encode(f.read()).decode()
    driver.execute_script("""
        const bytes = Uint8Array.from(atob(arguments[0]), c => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], "shared-image.jpg", { type: "image/jpeg" }));
        for (const type of ["dragenter", "dragover", "drop"]) {
          document.body.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
        }""", webp_b64)
    did = page.ready_tile("shared-image")
    dropped = server.api(f"/classes/Photo/{did}")
    assert dropped["contentType"] == "image/webp", f"the dropped WebP is stored as {dropped['contentType']}"
    assert not driver.execute_script("return document.body.classList.contains('dropping')"), "the drop overlay stayed"

    page.step = "gallery"
    driver.find_element(By.ID, "new-gallery-name").send_keys("Holidays" + Keys.ENTER)
    page.wait().until(lambda d: "#gallery/" in d.current_url)
    gallery = driver.current_url.split("#gallery/")[1]
    driver.get(server.url + "/#photos")
    page.wait().until(lambda d: len(page.tiles()) >= 30)
    page.idle()
    added = driver.execute_script("return [...document.querySelectorAll('#grid .tile')].slice(1, 4).map(t => t.dataset.id)")
    for i in range(3):
        page.click_tile(i + 1)
        page.wait().until(lambda d: dialog.is_displayed())
        from selenium.webdriver.support.select import Select
        Select(dialog.find_element(By.TAG_NAME, "select")).select_by_visible_text("Holidays")
        page.wait().until(lambda d: "Added to Holidays" in d.find_element(By.ID, "status").text)
        driver.execute_script("document.getElementById('status').textContent = ''")
        driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        page.wait().until(lambda d: not dialog.is_displayed())
    driver.get(server.url + f"/#gallery/{gallery}")
    page.wait().until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".gallery-item")) == 3)
    before = [e.get_attribute("data-id") for e in driver.find_elements(By.CSS_SELECTOR, ".gallery-item")]
    assert before == added, f"gallery order {before} is not the order added {added}"
    item = driver.find_elements(By.CSS_SELECTOR, ".gallery-item")[0]
    item.click()
    driver.switch_to.active_element.send_keys(Keys.ALT, Keys.ARROW_RIGHT)
    expected = [before[1], before[0], before[2]]
    def stored_order():
        items = server.api("/classes/GalleryItem", {"where": {"gallery": {"__type": "Pointer", "className": "Gallery", "objectId": gallery}}, "order": "position"})["results"]
        return [i["photo"]["objectId"] for i in items]
    page.wait().until(lambda d: stored_order() == expected)
    page.wait().until(lambda d: [e.get_attribute("data-id") for e in d.find_elements(By.CSS_SELECTOR, ".gallery-item")] == expected)
    page.shot("gallery")

    page.step = "trash and restore"
    driver.get(server.url + "/#photos")
    page.wait().until(lambda d: len(page.tiles()) >= 30)
    page.idle()
    victim = driver.execute_script("return document.querySelectorAll('#grid .tile')[5].dataset.id")
    # By its id, not its index: a live update may re-render the grid between reading the id and
    # the click, and the sixth tile is then another photo (the run waited for a victim that was
    # never the one trashed).
    page.act_in_preview("grid", victim, "Move to Recently Deleted", "Moved to Recently Deleted.")
    assert "deletedAt" in server.api(f"/classes/Photo/{victim}")
    driver.execute_script("document.getElementById('preview').close()")
    driver.find_element(By.LINK_TEXT, "Recently Deleted").click()
    page.wait().until(lambda d: d.find_element(By.CSS_SELECTOR, f'#trash-grid .tile[data-id="{victim}"]'))
    page.idle("trash-grid")
    page.shot("trash")
    page.act_in_preview("trash-grid", victim, "Restore", "Restored.")
    page.wait().until(lambda d: not dialog.is_displayed())  # the PUT's handler closes the preview
    assert "deletedAt" not in server.api(f"/classes/Photo/{victim}")
    driver.find_element(By.LINK_TEXT, "All photos").click()
    page.wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#grid .tile[data-id="{victim}"]'))

    page.step = "live"
    # A change made outside the page (another client or instance, here plain SQL): the trigger's
    # notification reaches the page's live query, whose `leave` takes the photo out of the grid.
    # Polling is off while the subscription is up, and it never removes photos, so only the live
    # query can pass this.
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "true", "live query down"
    psql(database_url(server.admin, server.db), f"update photos set deleted_at = now() where object_id = '{victim}'")
    page.wait(10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, f'#grid .tile[data-id="{victim}"]'))

    errors = page.console_errors()
    assert not errors, f"console errors: {errors}"


def accounts(page, server, args, servers):
    """Phase 2, more accounts on the same server (and sign-up on a second one, added to `servers`)."""
    driver = page.driver
    page.step = "accounts: admin logs out"
    driver.find_element(By.ID, "logout").click()
    page.wait().until(lambda d: page.login_form().is_displayed())
    page.step = "accounts: login form"
    users = {}
    for name in ("alice", "bob"):
        created = server.api("/users", headers=server.master(), body={"username": name, "password": f"{name}'s passphrase"})
        users[name] = created["objectId"]
    page.step = "accounts: login form"
    driver.get(server.url + "/")
    page.wait().until(lambda d: page.login_form().is_displayed())
    assert not driver.find_element(By.ID, "signup-switch").is_displayed(), "sign-up offered while signup_open is false"
    assert not driver.find_element(By.ID, "account").is_displayed()
    assert not driver.find_element(By.ID, "grid").is_displayed(), "the library shows before a login"
    assert driver.switch_to.active_element.get_attribute("id") == "login-username", "the login form does not take the focus"
    page.shot("login")

    page.step = "accounts: wrong password"
    page.log_in("alice", "not alice's passphrase")
    page.wait().until(lambda d: d.find_element(By.ID, "login-error").text == "Invalid username/password.")
    assert page.login_form().is_displayed()
    assert driver.find_element(By.ID, "login-error").get_attribute("role") == "alert"
    page.shot("login-error")
    # The refused login's 404 is expected. Chrome hands its console entry to the log a little
    # after the page shows the error, so drain until that entry is seen: a single drain missed
    # it once and it failed the next step's check.
    refused = []
    page.wait().until(lambda d: refused.extend(d.get_log("browser")) or any(
        "/parse/login" in e["message"] and "404" in e["message"] for e in refused))
    unexpected = [e for e in page.console_errors(refused) if "/parse/login" not in e["message"]]
    assert not unexpected, f"console errors: {unexpected}"

    page.step = "accounts: alice's library"
    page.log_in("alice", "alice's passphrase")
    page.logged_in_as("alice")
    # The photos above are the admin's.
    assert not page.tiles(), f"alice sees {len(page.tiles())} photos that are not hers"
    path = page.drawn_jpeg(os.path.join(server.store, "alice-photo.jpg"), 7, "alice")
    driver.find_element(By.ID, "upload-input").send_keys(path)
    alice_photo = page.ready_tile("alice-photo")
    stored = server.api(f"/classes/Photo/{alice_photo}", headers=server.master())
    assert stored["owner"]["objectId"] == users["alice"], f"the upload's owner is {stored.get('owner')}"
    page.shot("alice")

    page.step = "accounts: log out"
    alice_token = driver.execute_script("return localStorage.getItem('galleryd.sessionToken')")
    assert alice_token and alice_token.startswith("r:")
    driver.find_element(By.ID, "logout").click()
    page.wait().until(lambda d: page.login_form().is_displayed())
    assert driver.execute_script("return localStorage.getItem('galleryd.sessionToken')") is None
    assert server.status("/users/me", {"X-Parse-Session-Token": alice_token}) == (400, 209), "logout left the session valid"
    assert not driver.find_element(By.ID, "account").is_displayed()

    page.step = "accounts: bob's library"
    page.log_in("bob", "bob's passphrase")
    page.logged_in_as("bob")
    assert not driver.find_elements(By.CSS_SELECTOR, f'#grid .tile[data-id="{alice_photo}"]'), "bob sees alice's photo"
    assert not page.tiles(), f"bob sees {len(page.tiles())} photos that are not his"
    assert not driver.find_elements(By.CSS_SELECTOR, "#gallery-list li"), "bob sees galleries that are not his"
    page.shot("bob")
    errors = page.console_errors()
    assert not errors, f"console errors: {errors}"

    page.step = "accounts: session ended by the server"
    # Bob's session revoked elsewhere (another tab logged out): the page's LiveQuery subscription
    # ends with it (209, issue #25), which brings the login form back with a notice, no call needed.
    bob_token = driver.execute_script("return localStorage.getItem('galleryd.sessionToken')")
    server.api("/logout", headers={"X-Parse-Session-Token": bob_token}, body={})
    page.wait().until(lambda d: page.login_form().is_displayed())
    page.wait().until(lambda d: "session has ended" in d.find_element(By.ID, "login-notice").text)
    assert driver.execute_script("return localStorage.getItem('galleryd.sessionToken')") is None

    page.step = "accounts: throttled login"
    # Failures past the free ones (2 here) block the username with a doubling back-off: the
    # page shows the Retry-After wait and keeps its button disabled meanwhile.
    for _ in range(10):
        page.log_in("mallory", "guess")
        # The message and the button read together, as the page sets them in one go.
        message, disabled = page.wait().until(lambda d: d.execute_script(
            "const e = document.getElementById('login-error').textContent;"
            "return e && [e, document.getElementById('login-submit').disabled]"))
        if "Try again in" in message:
            break
        assert message == "Invalid username/password.", message
    assert message.startswith("Too many failed login attempts. Try again in "), message
    assert disabled, "the button is enabled during the Retry-After wait"
    page.shot("login-throttled")

    page.step = "accounts: sign-up"
    # A second instance with signup_open, no account yet: the form offers sign-up, which logs the new user in.
    second = Server(args.binary, args.database_url, {"GALLERYD_SIGNUP_OPEN": "true"})
    servers.append(second)
    driver.get(second.url + "/")
    page.wait().until(lambda d: page.login_form().is_displayed())
    assert driver.find_element(By.ID, "signup-switch").is_displayed(), "no sign-up while signup_open is true"
    driver.find_element(By.ID, "signup-toggle").click()
    page.wait().until(lambda d: d.find_element(By.ID, "signup-email").is_displayed())
    driver.find_element(By.ID, "signup-email").send_keys("carol@example.org")
    page.log_in("carol", "carol's passphrase")
    page.logged_in_as("carol")
    me = second.api("/users/me", headers={"X-Parse-Session-Token": driver.execute_script("return localStorage.getItem('galleryd.sessionToken')")})
    assert me["username"] == "carol" and me["email"] == "carol@example.org", me


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--out", default="bench/out")
    parser.add_argument("--docs", default=None, help="where to copy the README screenshot")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # Two free failed logins per username, so the accounts phase reaches the 429 in a few tries.
    server = Server(args.binary, args.database_url, {"GALLERYD_LOGIN_FREE_FAILURES": "2"})
    servers = [server]
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--disable-gpu"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(180)
    page = Page(driver, args.out)
    try:
        first_admin(page, server, args.binary)
        accounts(page, server, args, servers)
        if args.docs:
            shutil.copy(os.path.join(args.out, "browser-grid.png"), os.path.join(args.docs, "web-gallery.png"))
        print("browser: all steps passed (first admin, login form, load, page 3, search, preview, upload, HEIC and PNG upload, WebP drop, gallery reorder, trash and restore, live; "
              "accounts: login form, wrong password, alice's upload, logout, bob's library, ended session, throttling, sign-up)")
    except (AssertionError, WebDriverException) as error:  # Timeout, Stale and click-intercepted too
        driver.save_screenshot(os.path.join(args.out, "browser-failure.png"))
        print(f"browser: FAILED at step '{page.step}': {type(error).__name__}: {error}", file=sys.stderr)
        # Which wait or assertion: a timeout's message is empty, and a step has several.
        ours = (os.path.abspath(__file__), os.path.abspath(gallery_browser.__file__))
        here = [f for f in traceback.extract_tb(error.__traceback__) if f.filename in ours]
        print("at:", f"{os.path.basename(here[-1].filename)} line {here[-1].lineno}: {here[-1].line}" if here else "?", file=sys.stderr)
        for entry in driver.get_log("browser")[-20:]:
            print("console:", entry.get("level"), entry.get("message"), file=sys.stderr)
        print("pending or failed photos:", server.api("/classes/Photo", {"where": {"status": {"$ne": "ready"}}, "keys": "title,status,error"},
                                                      headers=server.master()), file=sys.stderr)
        print("visibility:", driver.execute_script("return document.visibilityState"), file=sys.stderr)
        print("status line:", driver.execute_script("return document.getElementById('status')?.textContent"), file=sys.stderr)
        print(open(server.log.name).read()[-3000:], file=sys.stderr)
        # Again last: CI keeps only the tail of the output, and the server log above can fill it.
        print(f"browser: FAILED at step '{page.step}': {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    finally:
        driver.quit()
        for started in servers:
            started.stop()


if __name__ == "__main__":
    main()
