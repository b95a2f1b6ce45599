/** An example Spring Boot application using dlock's starter. */
package dev.dlock.example;
