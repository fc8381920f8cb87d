package fhiragentgateway.hapi;

import ca.uhn.fhir.rest.server.RestfulServer;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * Starts HAPI FHIR R4 (JPA; in-memory H2, or PostgreSQL with HAPI_JDBC_URL: see HapiServerConfig) at http://HOST:PORT/fhir on embedded Jetty.
 * HAPI_PORT (default 8090) and HAPI_HOST (default 127.0.0.1) choose the address; port 0 picks a free one.
 * Prints "HAPI_READY <base url>" once the FHIR servlet answers, so a parent process can wait for it.
 * With HAPI_EXIT_ON_STDIN_EOF=1 it exits when its stdin closes: a parent that dies, even by SIGKILL,
 * cannot leave the server running.
 */
public final class HapiLauncher {

	private HapiLauncher() {}

	public static void main(String[] args) throws Exception {
		long started = System.nanoTime();
		String host = env("HAPI_HOST", "127.0.0.1");
		int port = Integer.parseInt(env("HAPI_PORT", "8090"));

		AnnotationConfigApplicationContext spring = new AnnotationConfigApplicationContext(HapiServerConfig.class);
		RestfulServer fhir = spring.getBean(RestfulServer.class);

		Server jetty = new Server();
		ServerConnector connector = new ServerConnector(jetty);
		connector.setHost(host);
		connector.setPort(port);
		jetty.addConnector(connector);
		ServletContextHandler context = new ServletContextHandler();
		context.setContextPath("/");
		ServletHolder holder = new ServletHolder("fhir", fhir);
		// Initialise now, not on the first request, so "ready" means ready.
		holder.setInitOrder(1);
		context.addServlet(holder, "/fhir/*");
		jetty.setHandler(context);
		jetty.setStopAtShutdown(false);

		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				jetty.stop();
			} catch (Exception ignored) {
				// Exiting anyway.
			}
			spring.close();
		}, "hapi-shutdown"));

		if ("1".equals(env("HAPI_EXIT_ON_STDIN_EOF", "0"))) {
			Thread watchdog = new Thread(HapiLauncher::exitOnStdinEof, "hapi-stdin-watchdog");
			watchdog.setDaemon(true);
			watchdog.start();
		}

		jetty.start();
		String base = "http://" + host + ":" + connector.getLocalPort() + "/fhir";
		long ms = (System.nanoTime() - started) / 1_000_000;
		System.out.println("HAPI_READY " + base + " startup_ms=" + ms);
		System.out.flush();
		jetty.join();
	}

	private static void exitOnStdinEof() {
		try {
			while (System.in.read() != -1) {
				// Drain; only the end of the stream matters.
			}
		} catch (java.io.IOException ignored) {
			// A broken pipe means the parent is gone too.
		}
		System.exit(0);
	}

	static String env(String name, String fallback) {
		String value = System.getProperty(name, System.getenv(name));
		return value == null || value.isBlank() ? fallback : value;
	}
}
