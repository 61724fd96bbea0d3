// A stand-in for https://telegram.org/js/telegram-web-app.js in the browser tests (served by
// page.route; nothing is fetched from telegram.org). A test sets window.__tg (initData,
// start_param, colorScheme, themeParams) with an init script before the page loads.
(() => {
  const given = window.__tg || {};
  const calls = [];
  const noop = (name) => (...args) => {
    calls.push([name, ...args]);
  };
  window.Telegram = {
    WebApp: {
      initData: given.initData || "",
      initDataUnsafe: { start_param: given.start_param || "" },
      colorScheme: given.colorScheme || "light",
      themeParams: given.themeParams || {},
      version: "8.0",
      platform: "tdesktop",
      ready: noop("ready"),
      expand: noop("expand"),
      onEvent: noop("onEvent"),
      offEvent: noop("offEvent"),
      HapticFeedback: {
        impactOccurred: noop("impactOccurred"),
        notificationOccurred: noop("notificationOccurred"),
        selectionChanged: noop("selectionChanged"),
      },
      calls,
    },
  };
})();
