/**
 * The Spring Boot starter: auto-configures a {@code LockClient} from {@code dlock.*} properties, the
 * {@code @WithLock}/{@code @OnLeader} annotations, metrics and actuator endpoints. The backend modules,
 * Micrometer, the actuator, Spring Data Redis and Reactor are optional: each part is configured when its
 * module is present.
 *
 * <p>Spring creates the configuration classes and proxies them (CGLIB, in their package), instantiates the
 * failure analyzers and reaches non-public members, all through {@code spring.core}'s reflection:
 * {@code dev.dlock.spring} is open to {@code spring.core} and to no one else. Seen on the module path
 * (Spring Boot 4.0.8, {@code mem:}): without it the start fails ({@code DlockAutoConfiguration} not
 * accessible to {@code spring.core}); with it the client, {@code @WithLock} and the property checks'
 * failure report work.
 */
@SuppressWarnings("requires-transitive-automatic") // its types are in this module's API
module dev.dlock.spring.boot.starter {
    requires transitive dev.dlock.core;
    requires transitive spring.boot;
    requires transitive spring.boot.autoconfigure;
    requires transitive spring.context;
    requires transitive spring.beans;
    requires transitive spring.core;
    requires spring.aop;
    requires spring.expression;
    requires org.apache.commons.logging;
    requires static dev.dlock.redis;
    requires static dev.dlock.jdbc;
    requires static dev.dlock.zookeeper;
    requires static dev.dlock.micrometer;
    requires static lettuce.core;
    requires static curator.framework;
    requires static java.sql;
    requires static micrometer.core;
    requires static spring.data.redis;
    requires static spring.boot.actuator;
    requires static spring.boot.actuator.autoconfigure;
    requires static spring.boot.health;
    requires static reactor.core;
    requires static org.reactivestreams;

    exports dev.dlock.spring;

    opens dev.dlock.spring to
            spring.core;
}
