"""What the web gallery's browser test (gallery_test.py) drives: a galleryd process with its own database
(`Server`), the page in headless Chromium (`Page`: waits that survive the grid's re-renders, the login
form, uploads that become ready), and the JPEGs the page draws itself (`MAKE_JPEG`, `SEED`)."""
import base64, json, os, secrets, shutil, socket, subprocess, tempfile, time, urllib.error, urllib.parse, urllib.request

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

APP_ID = "gallery"


def database_url(base, name):
    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def psql(url, sql):
    subprocess.run(["psql", url, "-qtAc", sql], check=True, stdout=subprocess.DEVNULL)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A galleryd process on a free port with its own database and store."""

    def __init__(self, binary, base_url, extra_env=None):
        self.db = f"galleryd_browser_{secrets.token_hex(4)}"
        self.admin = base_url
        psql(base_url, f"create database {self.db}")
        self.store = tempfile.mkdtemp(prefix="galleryd-browser-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.master_key = secrets.token_hex(16)
        self.env = env = dict(os.environ, DATABASE_URL=database_url(base_url, self.db), GALLERYD_MASTER_KEY=self.master_key,
                   GALLERYD_URL_SIGNING_KEY=secrets.token_hex(32),
                   GALLERYD_STORAGE_DIR=self.store, GALLERYD_HOST="127.0.0.1", GALLERYD_PORT=str(self.port),
                   GALLERYD_PUBLIC_URL=self.url, GALLERYD_WORKERS="2", GALLERYD_MIN_FREE_BYTES="0", GALLERYD_LOG_LEVEL="notice",
                   **(extra_env or {}))
        self.log = open(os.path.join(self.store, "galleryd.log"), "w")
        self.process = subprocess.Popen([binary, "serve"], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(self.url + "/ready", timeout=2).status == 200:
                    return
            except Exception:
                time.sleep(0.2)
        raise SystemExit("galleryd did not become ready; log: " + open(self.log.name).read()[-2000:])

    def create_admin(self, binary, password):
        """The first admin, made as scripts/run.sh makes it: `galleryd users create --admin --password-file`."""
        path = os.path.join(self.store, "admin.password")
        with open(path, "w") as f:
            f.write(password + "\n")
        subprocess.run([binary, "users", "create", "admin", "--admin", "--password-file", path], env=self.env,
                       check=True, stdout=subprocess.DEVNULL)

    def api(self, path, params=None, headers=None, body=None, method=None):
        """A call with the master key, unless `headers` are given (a session's, or `{}` for the app id alone)."""
        if headers is None:
            headers = self.master()
        query = "?" + urllib.parse.urlencode({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in params.items()}) if params else ""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + "/parse" + path + query, data=data, method=method,
                                         headers={"X-Parse-Application-Id": APP_ID, "Content-Type": "application/json", **(headers or {})})
        return json.load(urllib.request.urlopen(request, timeout=10))

    def status(self, path, headers=None):
        """The HTTP status and Parse code of a GET (errors included)."""
        request = urllib.request.Request(self.url + "/parse" + path, headers={"X-Parse-Application-Id": APP_ID, **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, None
        except urllib.error.HTTPError as error:
            return error.code, json.load(error).get("code")

    def master(self):
        return {"X-Parse-Master-Key": self.master_key}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        try:
            psql(self.admin, f"drop database if exists {self.db} with (force)")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.store, ignore_errors=True)


# Draws a distinct JPEG on a canvas (aspect ratio, colours and its number vary) and returns it as a Blob.
MAKE_JPEG = """
window.__makeJPEG = (i, label) => {
  const ratios = [4/3, 3/2, 1, 2/3, 16/9, 3/4, 5/4];
  const ratio = ratios[i % ratios.length];
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(ratio >= 1 ? 480 : 480 * ratio);
  canvas.height = Math.round(ratio >= 1 ? 480 / ratio : 480);
  const g = canvas.getContext('2d');
  const hue = (i * 47) % 360;
  const gradient = g.createLinearGradient(0, 0, canvas.width, canvas.height);
  gradient.addColorStop(0, `hsl(${hue}, 70%, 55%)`);
  gradient.addColorStop(1, `hsl(${(hue + 60) % 360}, 70%, 30%)`);
  g.fillStyle = gradient; g.fillRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = `hsla(${(hue + 180) % 360}, 80%, 70%, .8)`;
  g.beginPath(); g.arc(canvas.width * .7, canvas.height * .35, canvas.height * .18, 0, 7); g.fill();
  g.fillStyle = '#fff'; g.font = 'bold 40px sans-serif'; g.fillText(label, 20, canvas.height - 24);
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.85));
};
"""

SEED = MAKE_JPEG + """
const [count, sunset, token, done] = [arguments[0], arguments[1], arguments[2], arguments[arguments.length - 1]];
const h = {'X-Parse-Application-Id': 'gallery', 'X-Parse-Session-Token': token};
(async () => {
  for (let i = 0; i < count; i++) {
    const title = i < sunset ? `Sunset over the bay ${i}` : `Photo ${i}`;
    const blob = await window.__makeJPEG(i, `#${i}`);
    const file = await (await fetch(`/parse/files/p${i}.jpg`, {method: 'POST', headers: {...h, 'Content-Type': 'image/jpeg'}, body: blob})).json();
    const r = await fetch('/parse/classes/Photo', {method: 'POST', headers: {...h, 'Content-Type': 'application/json'},
      body: JSON.stringify({original: {__type: 'File', name: file.name}, title})});
    if (r.status !== 201) throw new Error('create failed ' + r.status);
  }
})().then(() => done('ok'), (e) => done('error: ' + e));
"""

class Page:
    """The page in the browser, with the waits and steps every phase of the test takes."""

    def __init__(self, driver, out):
        self.driver = driver
        self.out = out
        self.step = "start"  # what the run is doing, for the failure report

    def wait(self, seconds=20):
        """A wait polling every 0.1 s: the grid re-renders as pages and live changes arrive, so
        elements found a moment ago can go stale."""
        return WebDriverWait(self.driver, seconds, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException])

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(self.out, f"browser-{name}.png"))

    def tiles(self):
        return self.driver.find_elements(By.CSS_SELECTOR, "#grid .tile")

    def idle(self, grid="grid"):
        self.wait().until(lambda d: d.find_element(By.ID, grid).get_attribute("data-loading") == "false")

    def click_tile(self, index, grid="grid"):
        """Clicks the index-th tile, finding it again if a re-render replaced it meanwhile."""
        for _ in range(10):
            try:
                self.driver.find_elements(By.CSS_SELECTOR, f"#{grid} .tile")[index].click()
                return
            except StaleElementReferenceException:
                time.sleep(0.1)
        raise AssertionError(f"tile {index} kept going stale")

    def click_css(self, selector):
        """Clicks the element a selector finds once it exists, finding it again if it goes stale."""
        for _ in range(10):
            try:
                self.wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, selector))[0].click()
                return
            except StaleElementReferenceException:
                time.sleep(0.1)
        raise AssertionError(f"{selector} kept going stale")

    def login_form(self):
        return self.driver.find_element(By.ID, "login")

    def log_in(self, username, password):
        for field, value in (("login-username", username), ("login-password", password)):
            element = self.driver.find_element(By.ID, field)
            element.clear()
            element.send_keys(value)
        self.wait().until(lambda d: d.find_element(By.ID, "login-submit").is_enabled())
        self.driver.execute_script("document.getElementById('login-error').textContent = ''")  # the last attempt's
        self.driver.find_element(By.ID, "login-submit").click()

    def logged_in_as(self, name):
        self.wait().until(lambda d: d.find_element(By.ID, "account-name").text == name)
        self.wait().until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
        assert not self.login_form().is_displayed()
        self.wait().until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "true")
        self.idle()

    def act_in_preview(self, grid, photo, button, message):
        """Opens `photo`'s preview from `grid`, clicks `button`, and waits until the tile has left the
        grid and the page shows `message`: the live query's `leave` can take the tile out before the
        request's answer reaches the page, whose handler then steps the preview on or closes it."""
        dialog = self.driver.find_element(By.ID, "preview")
        self.click_css(f'#{grid} .tile[data-id="{photo}"]')
        self.wait().until(lambda d: dialog.is_displayed())
        self.driver.execute_script("document.getElementById('status').textContent = ''")
        dialog.find_element(By.XPATH, f".//button[text()='{button}']").click()
        self.wait().until(lambda d: not d.find_elements(By.CSS_SELECTOR, f'#{grid} .tile[data-id="{photo}"]'))
        self.wait().until(lambda d: d.find_element(By.ID, "status").text == message)

    def drawn_jpeg(self, path, index, label):
        """Writes to `path` the `index`-th JPEG the page draws (MAKE_JPEG) with `label` on it; returns `path`."""
        data = self.driver.execute_async_script(MAKE_JPEG + """
            const done = arguments[arguments.length - 1];
            window.__makeJPEG(arguments[0], arguments[1]).then(b => b.arrayBuffer()).then(a => {
              let s = ''; new Uint8Array(a).forEach(x => s += String.fromCharCode(x)); done(btoa(s)); });""", index, label)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def ready_tile(self, label):
        """The id of the photo whose tile's label starts with `label`, once it is ready and its image shown."""
        photo = self.wait(30).until(lambda d: d.execute_script(
            f"return document.querySelector('#grid .tile[aria-label^=\"{label}\"]')?.dataset.id"))
        self.wait(60).until(lambda d: d.find_element(By.CSS_SELECTOR, f'#grid .tile[data-id="{photo}"]').get_attribute("data-status") == "ready")
        self.wait().until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#grid .tile[data-id="{photo}"] img'))
        return photo

    def console_errors(self, entries=None):
        """The browser console's errors (the missing favicon's aside) among `entries`, or in its log."""
        entries = self.driver.get_log("browser") if entries is None else entries
        return [e for e in entries if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]]
