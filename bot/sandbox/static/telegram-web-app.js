// The sandbox's stand-in for https://telegram.org/js/telegram-web-app.js (nothing is fetched
// from telegram.org): Telegram.WebApp as the Mini App reads it, from the launch parameters
// Telegram puts in the page's #hash (tgWebAppData: the signed initData).
(() => {
  const launch = new URLSearchParams(location.hash.slice(1));
  const initData = launch.get("tgWebAppData") || "";
  const unsafe = {};
  for (const [key, value] of new URLSearchParams(initData)) {
    try {
      unsafe[key] = key === "user" ? JSON.parse(value) : value;
    } catch {
      unsafe[key] = value;
    }
  }
  const noop = () => {};
  window.Telegram = {
    WebApp: {
      initData,
      initDataUnsafe: unsafe,
      colorScheme: "light",
      themeParams: {},
      version: launch.get("tgWebAppVersion") || "8.0",
      platform: "web",
      ready: noop,
      expand: noop,
      close: noop,
      onEvent: noop,
      offEvent: noop,
      HapticFeedback: { impactOccurred: noop, notificationOccurred: noop, selectionChanged: noop },
    },
  };
})();
