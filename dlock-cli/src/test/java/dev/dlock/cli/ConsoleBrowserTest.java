package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.testsupport.RedisProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * {@code dlock console} end to end in a real headless Chromium (Debian's {@code chromium} and {@code
 * chromium-driver}, driven by Selenium through {@code /usr/bin/chromedriver}; nothing is downloaded): a
 * redis-server, the console and lock holders as separate {@code dlock} processes. The page must show the
 * holders, a lease lost by a holder that stopped renewing (its JVM is SIGSTOPped), and a
 * force-release through the button that ends the holder's command with exit 75. Leaves a screenshot in
 * {@code target/console.png}.
 */
class ConsoleBrowserTest {
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    CliProcesses cli;
    RedisProcess redis;
    /** Just after the server started: its hold-back cannot end before this + the max lease. */
    long redisUpNanos;

    WebDriver browser;

    @BeforeEach
    void setUp() throws Exception {
        assertThat(CHROMEDRIVER)
                .as("headless Chromium is needed: apt-get install chromium chromium-driver (scripts/test.sh does)")
                .isExecutable();
        assertThat(CHROMIUM).as("apt-get install chromium chromium-driver").isExecutable();
        cli = new CliProcesses(dir);
        redis = RedisProcess.start();
        redisUpNanos = System.nanoTime();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        cli.close();
        redis.close();
    }

    private static WebDriver chromium() {
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                .build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments(
                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,860");
        return new ChromeDriver(service, options);
    }

    private static String consoleUrl(CliProcesses.Running console) throws Exception {
        Pattern url = Pattern.compile("dlock console: (http://127\\.0\\.0\\.1:\\d+/)");
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = url.matcher(console.out());
            if (m.find()) {
                return m.group(1);
            }
            assertThat(console.process.isAlive())
                    .as("console exited: %s", console.err())
                    .isTrue();
            Thread.sleep(50);
        }
        throw new AssertionError("the console printed no URL; stderr: " + console.err());
    }

    private static String pid(CliProcesses.Running running) {
        return Long.toString(running.process.pid());
    }

    @Test
    void pageShowsHoldersLostLeaseAndForceRelease() throws Exception {
        String store = redis.uri();
        CliProcesses.Running console =
                cli.start("console", "--port", "0", "--backend", store, "--allow-release", "--interval", "300ms");
        String url = consoleUrl(console);

        CliProcesses.Running nightly =
                cli.start("run", "job:nightly", "--lease", "5s", "--backend", store, "--", "sleep", "300");
        CliProcesses.Running report =
                cli.start("run", "report:daily", "--lease", "3s", "--backend", store, "--", "sleep", "300");

        CliProcesses.Running encoder =
                cli.start("run", "encoders", "--permits", "2", "--backend", store, "--", "sleep", "300");
        CliProcesses.Running reader = cli.start("run", "catalog", "--shared", "--backend", store, "--", "sleep", "300");
        browser = chromium();
        browser.get(url);
        WebDriverWait wait = new WebDriverWait(browser, PATIENCE, Duration.ofMillis(100));
        wait.ignoring(StaleElementReferenceException.class);

        wait.until(d -> d.findElement(By.cssSelector("#locks tr[data-name='job:nightly']")));
        wait.until(d -> d.findElement(By.cssSelector("#locks tr[data-name='report:daily']")));
        wait.until(d -> d.findElement(By.cssSelector("#locks tr[data-name='encoders']")));
        wait.until(d -> d.findElement(By.cssSelector("#locks tr[data-name='catalog']")));
        assertThat(text(wait, "#about")).contains(store).contains("force-release allowed");
        assertThat(text(wait, "#locks tr[data-name='encoders'] .kind")).isEqualTo("sem");
        assertThat(text(wait, "#locks tr[data-name='encoders'] .holder")).startsWith(pid(encoder) + "@");
        assertThat(text(wait, "#locks tr[data-name='catalog'] .mode")).isEqualTo("read");
        assertThat(text(wait, "#locks tr[data-name='catalog'] .holder")).startsWith(pid(reader) + "@");
        String nightlyRow = "#locks tr[data-name='job:nightly'] ";
        assertThat(text(wait, nightlyRow + ".kind")).isEqualTo("lock");
        assertThat(text(wait, nightlyRow + ".holder")).startsWith(pid(nightly) + "@");
        assertThat(text(wait, nightlyRow + ".token")).matches("\\d+");
        assertThat(text(wait, nightlyRow + ".left")).matches("[0-9.]+m?s");
        assertThat(browser.findElements(By.cssSelector("#events tr[data-type='grant'][data-name='job:nightly']")))
                .as("holders that appear while the console runs are grants")
                .isNotEmpty();

        // A second process waits for job:nightly; it gets it after the force-release below.
        CliProcesses.Running next =
                cli.start("run", "job:nightly", "--lease", "5s", "--backend", store, "--", "sleep", "300");

        // The report holder stops renewing (its JVM is frozen): the store lets the lease run out.
        // First the page must have seen it renewed (lease left going up), so that its end is a lost lease.
        double previous = Double.MAX_VALUE;
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            double left = seconds(text(wait, "#locks tr[data-name='report:daily'] .left"));
            if (left > previous + 0.4) { // a renewal adds about a third of the 3 s lease
                break;
            }
            previous = left;
            assertThat(System.nanoTime())
                    .as("the page saw report:daily renewed")
                    .isLessThan(deadline);
            Thread.sleep(100);
        }
        signal("STOP", report);
        wait.until(d -> !d.findElements(By.cssSelector("#events tr[data-type='lost'][data-name='report:daily']"))
                .isEmpty());
        assertThat(browser.findElement(By.cssSelector("#events tr[data-type='lost'] .type"))
                        .getText())
                .isEqualTo("lost");
        assertThat(browser.findElements(By.cssSelector("#locks tr[data-name='report:daily']")))
                .as("a lost lease leaves the table")
                .isEmpty();
        assertThat(browser.findElements(
                        By.cssSelector("#timeline g.lane[data-name='report:daily'] circle[data-type='lost']")))
                .as("the lost lease is marked on the report lane of the timeline")
                .hasSize(1);

        // Force-release job:nightly with the button; the holder's command is stopped (exit 75).
        wait.until(d -> {
            d.findElement(By.cssSelector("#locks tr[data-name='job:nightly'] button.release"))
                    .click();
            return true;
        });
        wait.until(ExpectedConditions.alertIsPresent()).accept();
        wait.until(
                d -> !d.findElements(By.cssSelector("#events tr[data-type='force-release'][data-name='job:nightly']"))
                        .isEmpty());
        assertThat(nightly.await(60).code())
                .as("the force-released holder lost its lease")
                .isEqualTo(75);
        wait.until(d -> d.findElement(By.cssSelector("#locks tr[data-name='job:nightly'] .holder"))
                .getText()
                .startsWith(pid(next) + "@"));
        List<String> lanes = wait.until(d -> d.findElements(By.cssSelector("#timeline g.lane")).stream()
                .map(lane -> lane.getAttribute("data-name"))
                .toList());
        assertThat(lanes).contains("job:nightly", "report:daily");

        Path target = Path.of("target");
        Files.createDirectories(target);
        byte[] png = ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
        Files.write(target.resolve("console.png"), png);
        assertThat(png.length).isGreaterThan(10_000);

        assertThat(console.process.isAlive()).isTrue();
        signal("CONT", report);
    }

    /**
     * A fresh server holds grants back for the declared max lease (it cannot be told from one that lost its
     * holds): the page says so in a banner that counts down, and the banner goes when the hold-back ends.
     */
    @Test
    void bannerShowsTheHoldBackUntilItEnds() throws Exception {
        CliProcesses.Running console =
                cli.start("console", "--port", "0", "--backend", redis.uri() + "?maxLease=10s", "--interval", "200ms");
        browser = chromium();
        browser.get(consoleUrl(console));
        WebDriverWait wait = new WebDriverWait(browser, PATIENCE, Duration.ofMillis(50));
        wait.ignoring(StaleElementReferenceException.class);

        String banner = wait.until(d -> {
            String text = d.findElement(By.id("held-back")).getText();
            return text.isEmpty() ? null : text;
        });
        assertThat(banner).startsWith("Grants held back for ").contains("may have lost holds");
        double left = seconds(banner.substring("Grants held back for ".length(), banner.indexOf(':')));
        assertThat(left).isGreaterThan(0).isLessThanOrEqualTo(11.1);
        wait.until(d -> !d.findElement(By.id("held-back")).isDisplayed());
        // The server started a few ms before redisUpNanos, and its hold-back ends at the earliest the max
        // lease + 1% after its start.
        assertThat(Duration.ofNanos(System.nanoTime() - redisUpNanos))
                .as("ended no earlier than the max lease after the server's start")
                .isGreaterThanOrEqualTo(Duration.ofMillis(9_900));
    }

    /** {@code 2.5s} or {@code 850ms} in seconds. */
    private static double seconds(String duration) {
        return duration.endsWith("ms")
                ? Double.parseDouble(duration.substring(0, duration.length() - 2)) / 1000
                : Double.parseDouble(duration.substring(0, duration.length() - 1));
    }

    /** The text of an element, read again if the page redrew it meanwhile (it redraws on every poll). */
    private static String text(WebDriverWait wait, String css) {
        return wait.until(d -> d.findElement(By.cssSelector(css)).getText());
    }

    private static void signal(String signal, CliProcesses.Running running) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, pid(running)).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}
