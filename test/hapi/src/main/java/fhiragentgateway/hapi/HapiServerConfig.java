package fhiragentgateway.hapi;

import ca.uhn.fhir.batch2.jobs.config.Batch2JobsConfig;
import ca.uhn.fhir.context.FhirContext;
import ca.uhn.fhir.context.support.IValidationSupport;
import ca.uhn.fhir.jpa.api.config.JpaStorageSettings;
import ca.uhn.fhir.jpa.api.config.ThreadPoolFactoryConfig;
import ca.uhn.fhir.interceptor.api.IInterceptorBroadcaster;
import ca.uhn.fhir.jpa.api.dao.DaoRegistry;
import ca.uhn.fhir.jpa.api.dao.IFhirSystemDao;
import ca.uhn.fhir.jpa.delete.ThreadSafeResourceDeleterSvc;
import ca.uhn.fhir.jpa.interceptor.CascadingDeleteInterceptor;
import ca.uhn.fhir.jpa.batch2.JpaBatch2Config;
import ca.uhn.fhir.jpa.binary.api.IBinaryStorageSvc;
import ca.uhn.fhir.jpa.binstore.MemoryBinaryStorageSvcImpl;
import ca.uhn.fhir.jpa.config.HapiJpaConfig;
import ca.uhn.fhir.jpa.config.r4.JpaR4Config;
import ca.uhn.fhir.jpa.config.util.HapiEntityManagerFactoryUtil;
import ca.uhn.fhir.jpa.model.config.PartitionSettings;
import ca.uhn.fhir.jpa.model.dialect.HapiFhirH2Dialect;
import ca.uhn.fhir.jpa.model.dialect.HapiFhirPostgresDialect;
import ca.uhn.fhir.jpa.provider.IJpaSystemProvider;
import ca.uhn.fhir.jpa.provider.JpaCapabilityStatementProvider;
import ca.uhn.fhir.jpa.search.DatabaseBackedPagingProvider;
import ca.uhn.fhir.jpa.subscription.channel.config.SubscriptionChannelConfig;
import ca.uhn.fhir.narrative2.NullNarrativeGenerator;
import ca.uhn.fhir.rest.api.EncodingEnum;
import ca.uhn.fhir.rest.server.IncomingRequestAddressStrategy;
import ca.uhn.fhir.rest.server.RestfulServer;
import ca.uhn.fhir.rest.server.provider.ResourceProviderFactory;
import ca.uhn.fhir.rest.server.util.ISearchParamRegistry;
import jakarta.persistence.EntityManagerFactory;
import org.apache.commons.dbcp2.BasicDataSource;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;

import javax.sql.DataSource;
import java.util.Properties;

/**
 * The Spring wiring of a HAPI FHIR R4 JPA server on in-memory H2, or on PostgreSQL when HAPI_JDBC_URL is a
 * jdbc:postgresql: URL (HAPI_JDBC_USER, HAPI_JDBC_PASSWORD). The defaults follow
 * hapi-fhir-jpaserver-starter's application.yaml plus docker-compose.yml's overrides, so tests see the
 * same behaviour as the hapiproject/hapi image.
 */
@Configuration
@Import({
	JpaR4Config.class,
	HapiJpaConfig.class,
	JpaBatch2Config.class,
	Batch2JobsConfig.class,
	ThreadPoolFactoryConfig.class,
	// In-memory message broker; batch2 (reindex, $expunge...) needs one even with subscriptions off.
	SubscriptionChannelConfig.class
})
public class HapiServerConfig {

	@Bean
	public JpaStorageSettings storageSettings() {
		JpaStorageSettings settings = new JpaStorageSettings();
		settings.setAllowExternalReferences(true);
		settings.setAllowContainsSearches(true);
		settings.setAllowMultipleDelete(true);
		settings.setDefaultSearchParamsCanBeOverridden(true);
		settings.setFilterParameterEnabled(true);
		settings.setExpungeEnabled(true);
		settings.setDeleteExpungeEnabled(true);
		// docker-compose.yml sets 0: cached search results would hide the agent's own writes for 60 s.
		settings.setReuseCachedSearchResultsForMillis(0L);
		settings.setIndexMissingFields(JpaStorageSettings.IndexEnabledEnum.DISABLED);
		return settings;
	}

	@Bean
	public PartitionSettings partitionSettings() {
		return new PartitionSettings();
	}

	/** Where HAPI keeps its data: H2 in memory unless HAPI_JDBC_URL names another database. */
	@Bean
	public Database database() {
		return Database.fromEnv();
	}

	@Bean(destroyMethod = "close")
	public BasicDataSource dataSource(Database database) {
		BasicDataSource ds = new BasicDataSource();
		ds.setDriverClassName(database.driverClass());
		ds.setUrl(database.url());
		ds.setUsername(database.user());
		ds.setPassword(database.password());
		ds.setMaxTotal(10);
		return ds;
	}

	@Primary
	@Bean
	public LocalContainerEntityManagerFactoryBean entityManagerFactory(
			ConfigurableListableBeanFactory beanFactory,
			FhirContext fhirContext,
			JpaStorageSettings storageSettings,
			DataSource dataSource,
			Database database) {
		LocalContainerEntityManagerFactoryBean factory =
				HapiEntityManagerFactoryUtil.newEntityManagerFactory(beanFactory, fhirContext, storageSettings);
		factory.setPersistenceUnitName("HAPI_PU");
		factory.setDataSource(dataSource);
		factory.setJpaProperties(jpaProperties(database));
		return factory;
	}

	private static Properties jpaProperties(Database database) {
		Properties p = new Properties();
		p.put("hibernate.dialect", database.dialectClass());
		p.put("hibernate.hbm2ddl.auto", "update");
		p.put("hibernate.format_sql", "false");
		p.put("hibernate.show_sql", "false");
		p.put("hibernate.jdbc.batch_size", "20");
		p.put("hibernate.cache.use_query_cache", "false");
		p.put("hibernate.cache.use_second_level_cache", "false");
		p.put("hibernate.cache.use_structured_entries", "false");
		p.put("hibernate.cache.use_minimal_puts", "false");
		// Hibernate creates (and on a reused PostgreSQL database, updates) HAPI's tables, as the starter does.
		// No Lucene/Elasticsearch: plain SQL search, as the starter's default.
		p.put("hibernate.search.enabled", "false");
		return p;
	}

	@Primary
	@Bean
	public JpaTransactionManager transactionManager(EntityManagerFactory entityManagerFactory) {
		return new JpaTransactionManager(entityManagerFactory);
	}

	@Bean
	public IBinaryStorageSvc binaryStorageSvc() {
		return new MemoryBinaryStorageSvcImpl();
	}

	@Bean
	public RestfulServer restfulServer(
			IFhirSystemDao<?, ?> systemDao,
			IJpaSystemProvider systemProvider,
			ResourceProviderFactory resourceProviders,
			JpaStorageSettings storageSettings,
			ISearchParamRegistry searchParamRegistry,
			IValidationSupport validationSupport,
			DatabaseBackedPagingProvider pagingProvider,
			DaoRegistry daoRegistry,
			IInterceptorBroadcaster interceptorBroadcaster,
			ThreadSafeResourceDeleterSvc deleterSvc) {
		FhirContext ctx = systemDao.getContext();
		ctx.setNarrativeGenerator(new NullNarrativeGenerator());
		RestfulServer server = new RestfulServer(ctx);
		server.registerProviders(resourceProviders.createProviders());
		server.registerProvider(systemProvider);
		JpaCapabilityStatementProvider capabilities = new JpaCapabilityStatementProvider(
				server, systemDao, storageSettings, searchParamRegistry, validationSupport);
		capabilities.setImplementationDescription("HAPI FHIR R4 Server (fhir-agent-gateway test launcher)");
		server.setServerConformanceProvider(capabilities);
		// The starter's page sizes: _count defaults to 20 and is capped at 200; later pages come from _getpages.
		pagingProvider.setDefaultPageSize(20);
		pagingProvider.setMaximumPageSize(200);
		server.setPagingProvider(pagingProvider);
		server.setDefaultResponseEncoding(EncodingEnum.JSON);
		server.setServerAddressStrategy(new IncomingRequestAddressStrategy());
		// Only acts when a DELETE asks for it with _cascade=delete, as in the starter.
		server.registerInterceptor(new CascadingDeleteInterceptor(ctx, daoRegistry, interceptorBroadcaster, deleterSvc));
		return server;
	}

	/**
	 * The JDBC database, from HAPI_JDBC_URL (default: in-memory H2), HAPI_JDBC_USER and HAPI_JDBC_PASSWORD.
	 * The driver and Hibernate dialect follow from the URL; HAPI's own dialects handle its sequences and LOBs.
	 */
	public record Database(String url, String user, String password, String driverClass, String dialectClass) {

		static Database fromEnv() {
			String url = HapiLauncher.env("HAPI_JDBC_URL", "jdbc:h2:mem:hapi;DB_CLOSE_DELAY=-1");
			String user = HapiLauncher.env("HAPI_JDBC_USER", "");
			String password = HapiLauncher.env("HAPI_JDBC_PASSWORD", "");
			if (url.startsWith("jdbc:postgresql:")) {
				return new Database(url, user, password, "org.postgresql.Driver", HapiFhirPostgresDialect.class.getName());
			}
			if (url.startsWith("jdbc:h2:")) {
				// DB_CLOSE_DELAY=-1 keeps an in-memory database while the pool has no open connection.
				return new Database(url, user.isEmpty() ? "sa" : user, password, "org.h2.Driver", HapiFhirH2Dialect.class.getName());
			}
			throw new IllegalArgumentException("HAPI_JDBC_URL must start with jdbc:postgresql: or jdbc:h2: (got "
					+ url.replaceAll("password=[^&;]*", "password=<redacted>") + ")");
		}

		/** Never the password: a record's default toString would print it. */
		@Override
		public String toString() {
			return "Database[" + url.replaceAll("password=[^&;]*", "password=<redacted>") + " as " + user + "]";
		}
	}
}
