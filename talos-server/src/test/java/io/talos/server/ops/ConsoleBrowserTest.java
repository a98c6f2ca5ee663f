package io.talos.server.ops;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.server.TalosServer;
import io.talos.server.TestServers;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console end to end in headless Chromium (Debian's chromium and chromium-driver; .ci/run
 * installs them): a topic is created and produced to, a group commits an offset, and the page,
 * signed in with the admin credential, shows the topic, its partitions' offsets and the group's
 * lag. Saves a screenshot to target/console.png (docs/console.png is a copy of one).
 */
class ConsoleBrowserTest {
  private static final String CHROMIUM = "/usr/bin/chromium";
  private static final String DRIVER = "/usr/bin/chromedriver";

  @TempDir Path dir;

  @Test
  void consoleShowsTopicOffsetsAndGroupLag() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Path.of(CHROMIUM)) && Files.isExecutable(Path.of(DRIVER)),
        "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run does)");
    try (TalosServer server = TestServers.start(dir);
        TalosClient client = TalosClient.create(TalosClientConfig.builder().endpoint(server.endpoint().toString())
            .credentialFile(dir.resolve("admin-credential.properties")).build())) {
      client.admin().createTopic("orders", 3);
      List<byte[]> payloads = new ArrayList<>();
      for (int i = 0; i < 42; i++) payloads.add(("order " + i).getBytes(UTF_8));
      client.producer("orders", 0).put(payloads);
      client.producer("orders", 1).put(payloads.subList(0, 10));
      client.consumerGroups().resetOffsets("orders", "billing", Map.of(0, 29L, 1, 9L));
      Properties cred = new Properties();
      try (InputStream in = Files.newInputStream(dir.resolve("admin-credential.properties"))) {
        cred.load(in);
      }

      ChromeOptions options = new ChromeOptions();
      options.setBinary(CHROMIUM);
      options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
          "--window-size=1200,1000");
      ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(Path.of(DRIVER).toFile())
          .usingAnyFreePort().build();
      WebDriver browser = new ChromeDriver(service, options);
      try {
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(20));
        browser.get(server.opsEndpoint() + "/console/");
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("ready"), "ready"));
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("nodes"), server.endpoint().toString()));

        browser.findElement(By.id("keyId")).sendKeys(cred.getProperty("secretKeyId"));
        browser.findElement(By.id("secret")).sendKeys(cred.getProperty("secretKey"));
        browser.findElement(By.cssSelector("#signin button")).click();

        By ordersRow = By.cssSelector("#topics tbody tr[data-key='orders']");
        wait.until(ExpectedConditions.visibilityOfElementLocated(ordersRow));
        clickRow(wait, ordersRow);
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("topic-name"), "orders"));
        By p0 = By.cssSelector("#partitions tbody tr:first-child");
        wait.until(ExpectedConditions.textToBePresentInElementLocated(p0, "41"));
        // Read in one script: the page re-renders its tables on every refresh.
        @SuppressWarnings("unchecked")
        List<String> cells = (List<String>) ((JavascriptExecutor) browser).executeScript("return Array.from("
            + "document.querySelectorAll('#partitions tbody tr:first-child td')).map(t => t.textContent)");
        assertEquals("0", cells.get(0));
        assertEquals("0", cells.get(2)); // start offset
        assertEquals("41", cells.get(3)); // end offset
        assertTrue(Long.parseLong(cells.get(4)) > 0, cells.toString()); // bytes

        By billingRow = By.cssSelector("#groups tbody tr[data-key='billing']");
        wait.until(ExpectedConditions.visibilityOfElementLocated(billingRow));
        clickRow(wait, billingRow);
        // lag: partition 0 has 41 - 29 = 12, partition 1 has 9 - 9 = 0, partition 2 nothing
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("group-lag"), "12"));
        @SuppressWarnings("unchecked")
        List<String> lagRow = (List<String>) ((JavascriptExecutor) browser).executeScript("return Array.from("
            + "document.querySelectorAll('#group-partitions tbody tr:first-child td')).map(t => t.textContent)");
        assertEquals(List.of("orders", "0", "—", "29", "41", "12"), lagRow);

        Path shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
        Path out = Path.of("target", "console.png");
        Files.createDirectories(out.getParent());
        Files.copy(shot, out, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        browser.quit();
      }
    }
  }

  /**
   * Clicks a table row. The console re-renders its tables on every refresh, so a row found a
   * moment ago may have been replaced: find it again until the click lands.
   */
  private static void clickRow(WebDriverWait wait, By row) {
    wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class).until(driver -> {
      driver.findElement(row).click();
      return true;
    });
  }
}
