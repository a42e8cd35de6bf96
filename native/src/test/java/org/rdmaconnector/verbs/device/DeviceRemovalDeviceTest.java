package org.rdmaconnector.verbs.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdmaconnector.connector.RdmaEndpoint;
import org.rdmaconnector.connector.WorkCompletion;
import org.rdmaconnector.connector.WorkRequest;
import org.rdmaconnector.connector.spi.Activation;
import org.rdmaconnector.connector.spi.ChannelSet;
import org.rdmaconnector.connector.spi.ChannelSettings;
import org.rdmaconnector.connector.spi.DeviceRegistry;
import org.rdmaconnector.connector.spi.ListenerHub;
import org.rdmaconnector.connector.spi.ListenerSettings;
import org.rdmaconnector.verbs.TestProbes;
import org.rdmaconnector.verbs.engine.EventEngine;

/**
 * {@code rdma link delete rxe0} under two listeners that hold the device (a protection domain and a completion queue
 * from connections they accepted). The one bound to 10.0.0.1 gets DEVICE_REMOVAL on its listening id: it releases
 * everything it holds on the device and waits for the device, instead of claiming to listen on a dead id. The one on
 * 0.0.0.0 (whose listening id belongs to no device) keeps listening, and lets go of the device with the connection
 * that was open on it.
 *
 * <p>Runs LAST in the guest JVM ({@code @Order}, with the class orderer the VM tier configures): the device does not
 * come back within this process. rxe cannot take user contexts away (no disassociate), and rxe0 is the VM's only
 * device: librdmacm 44 notices a removal only by listing the devices, which fails (ENODEV) when none is left, so it
 * keeps its own context of rxe0 and the kernel finishes the removal only when the process exits. With another device
 * present the removal finishes within the process once everything on the device is closed (DeviceResetDeviceTest).
 */
@Tag("device")
@Order(Integer.MAX_VALUE)
@Timeout(120)
class DeviceRemovalDeviceTest {
    @Test
    void listenersWhoseDeviceIsRemovedReleaseIt() throws Exception {
        try (ConnectorStack stack = new ConnectorStack()) {
            ListenerHub hub = stack.hub;
            DeviceRegistry devices = stack.devices;
            EventEngine engine = stack.engine;
            int port = Loopback.nextPort();
            Activation bound = hub.activate(ListenerSettings.of(Loopback.ADDRESS, port, null, null, null, 4, 256, 2),
                Recorder.echo());
            int wildcardPort = Loopback.nextPort();
            Activation wildcard = hub.activate(ListenerSettings.of("0.0.0.0", wildcardPort, null, null, null, 4, 256,
                2), Recorder.echo());
            await("listening", () -> bound.state() == Activation.State.LISTENING
                && wildcard.state() == Activation.State.LISTENING);
            try (ChannelSet set = ChannelSet.open(ChannelSettings.DEFAULTS, devices, engine)) {
                echoOnce(set.connect(new InetSocketAddress(Loopback.ADDRESS, port), Loopback.TIMEOUT)).close();
            }
            await("the bound listener's connection is gone", () -> bound.connectionCount() == 0);
            ChannelSet client = ChannelSet.open(ChannelSettings.DEFAULTS, devices, engine);
            Process removal;
            try {
                echoOnce(client.connect(new InetSocketAddress(Loopback.ADDRESS, wildcardPort), Loopback.TIMEOUT));
                assertEquals(1, wildcard.connectionCount());

                removal = new ProcessBuilder("rdma", "link", "delete", "rxe0").inheritIO().start();
                await("the bound listener waits for its device", () -> bound.state()
                    == Activation.State.WAITING_FOR_DEVICE);
                assertTrue(bound.stateDetail().startsWith("waiting: "), bound.stateDetail());
                await("the wildcard listener's connection is gone", () -> wildcard.connectionCount() == 0);
                assertEquals(Activation.State.LISTENING, wildcard.state(), "a wildcard listener keeps listening");
            } finally {
                client.close();
            }
            await("the listeners released the device", () -> devices.openDevices().isEmpty());
            bound.close();
            wildcard.close();
            assertEquals(Activation.State.STOPPED, bound.state());
            System.out.println("rdma link delete rxe0 still waiting for this process to exit: " + removal.isAlive());
        }
    }

    /** Sends one message on {@code endpoint} and checks its echo; returns the endpoint. */
    private static RdmaEndpoint echoOnce(RdmaEndpoint endpoint) throws InterruptedException {
        WorkRequest echo = endpoint.receive();
        WorkCompletion sent = endpoint.send("before".getBytes(StandardCharsets.US_ASCII)).await(Loopback.TIMEOUT);
        assertNotNull(sent, "the send completed");
        assertTrue(sent.isSuccess(), sent.toString());
        assertNotNull(echo.await(Loopback.TIMEOUT), "the echo arrived");
        assertTrue(echo.result().isSuccess(), echo.toString());
        return endpoint;
    }

    private static void await(String what, java.util.function.BooleanSupplier condition)
        throws InterruptedException {
        TestProbes.await(what, Loopback.TIMEOUT, condition);
    }
}
