package org.rdmaconnector.connector.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Address literals are read strictly: full dotted quads and RFC 4291 IPv6 text, never short forms or names. */
class CidrTest {
    @Test
    void shortIpv4FormsAreRefusedInsteadOfReadAsOtherNetworks() {
        assertEquals("allowed peer '192.168.1/24' is not a full IPv4 address (four decimal octets) or an IPv6 address",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("192.168.1/24")).getMessage());
        assertEquals("allowed peer '10.1/16' is not a full IPv4 address (four decimal octets) or an IPv6 address",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.1/16")).getMessage());
        for (String shortForm : List.of("127.1", "10.0.1", "4294967295", "10.0.0.0.1", "1.2.3.", ".1.2.3")) {
            assertNull(Cidr.literal(shortForm), shortForm);
        }
    }

    @Test
    void octetsAreDecimalFromZeroTo255WithoutSignOrLeadingZero() {
        assertNull(Cidr.literal("1.2.3.256"));
        assertNull(Cidr.literal("+1.2.3.4"));
        assertNull(Cidr.literal("1.2.3.-4"));
        assertNull(Cidr.literal("0x7f.0.0.1"));
        assertNull(Cidr.literal("10.0.0.01"));
        assertEquals("allowed peer '010.0.0.0/8' is not a full IPv4 address (four decimal octets) or an IPv6 address: "
            + "an octet has a leading zero (some parsers read it as octal)",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("010.0.0.0/8")).getMessage());
        assertEquals("0.0.0.0", Cidr.literal("0.0.0.0").getHostAddress());
        assertEquals("255.255.255.255", Cidr.literal(" 255.255.255.255 ").getHostAddress());
        assertEquals("100.20.3.0/24", Cidr.parse("100.20.3.4/24").toString());
    }

    @Test
    void ipv6TextFormsOfRfc4291AreRead() throws Exception {
        for (String text : List.of("::", "::1", "fd00::", "fd00:0:0:0:0:0:0:1", "FD00:0DB8::1", "1:2:3:4:5:6:7::",
            "::2:3:4:5:6:7:8", "1::8", "::ffff:10.0.0.1", "::10.0.0.1", "1:2:3:4:5:6:10.0.0.1", "64:ff9b::10.0.0.1")) {
            assertEquals(InetAddress.getByName(text), Cidr.literal(text), text);
        }
    }

    @Test
    void malformedIpv6ZoneIdsBracketsAndNamesAreRefused() {
        for (String text : List.of(":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::",
            "12345::", ":1::", "1::2:", "::g", "::10.0.0.1:1", "10.0.0.1::", "::ffff:10.1", "::ffff:010.0.0.1",
            "rdma-host", "localhost", "", "  ")) {
            assertNull(Cidr.literal(text), text);
        }
        assertEquals("allowed peer 'fe80::1%eth0' is not a full IPv4 address (four decimal octets) or an IPv6 "
            + "address: a zone id (%) is not allowed",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("fe80::1%eth0")).getMessage());
        assertEquals("allowed peer '[fd00::]/8' is not a full IPv4 address (four decimal octets) or an IPv6 address: "
            + "give the address without brackets",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("[fd00::]/8")).getMessage());
        assertEquals("allowed peer 'rdma-host' is not a full IPv4 address (four decimal octets) or an IPv6 address",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parse("rdma-host")).getMessage());
    }

    @Test
    void aListNamesItsBadEntry() {
        assertEquals("allowed peer '10.0/16' is not a full IPv4 address (four decimal octets) or an IPv6 address",
            assertThrows(IllegalArgumentException.class, () -> Cidr.parseList("10.0.0.0/8, 10.0/16")).getMessage());
    }

    @Test
    void aListenAddressHasOneCanonicalText() {
        assertEquals("10.0.0.1", Cidr.canonical("::ffff:10.0.0.1"));
        assertEquals("10.0.0.1", Cidr.canonical(" 10.0.0.1 "));
        assertEquals(Cidr.canonical("fd00::1"), Cidr.canonical("FD00:0:0::0001"));
        assertNotNull(Cidr.canonical("0.0.0.0"));
        assertEquals("Address '10.1' is not an IP address",
            assertThrows(IllegalArgumentException.class, () -> Cidr.canonical("10.1")).getMessage());
    }
}
