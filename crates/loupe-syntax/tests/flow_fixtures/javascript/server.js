const express = require("express");
const { promisify } = require("util");

function createServer(options = {}) {
  const app = express();
  let port = options.port || 3000;
  const { host = "localhost", routes } = options;
  for (const route of routes) {
    app.get(route.path, function handler(req, res) {
      res.send(route.body);
    });
  }
  port = Number(port);
  app.listen(port, host, () => console.log(`listening on ${host}:${port}`));
  return app;
}

async function readConfig(path, fs) {
  const read = promisify(fs.readFile);
  let text;
  try {
    text = await read(path, "utf8");
  } catch (err) {
    console.error(err);
    return null;
  }
  return JSON.parse(text);
}

module.exports = { createServer, readConfig };
