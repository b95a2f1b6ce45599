package dev.dlock.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A small shop wired the way an application uses dlock: {@code dlock.uri} in {@code application.yml}
 * (the in-memory store by default; point it at Redis, PostgreSQL or ZooKeeper to run several instances),
 * {@code @WithLock} on a scheduled job, a REST endpoint and a reactive endpoint, and the actuator's
 * {@code health} and {@code dlock} endpoints.
 */
@SpringBootApplication
@EnableScheduling
public class ExampleApplication {
    /** Created by Spring. */
    public ExampleApplication() {}

    /**
     * Starts the application.
     *
     * @param args Spring Boot's command-line arguments, e.g. {@code --dlock.uri=redis://localhost:6379}
     */
    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }
}
