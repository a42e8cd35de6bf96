package org.rdmaconnector.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.opentest4j.AssertionFailedError;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The guest's JUnit XML reports (the console launcher's legacy format), as results to replay on the host. */
final class GuestResults {
    private GuestResults() {
    }

    /** One guest test and how it ended. */
    record Case(String className, String name, String outcome, String message, String detail) {
        /** Ends the host test as the guest test ended: passes, fails with the guest's message, or is skipped. */
        void replay() {
            switch (outcome) {
                case "passed" -> { }
                case "skipped" -> Assumptions.abort("skipped in the guest: " + message);
                default -> throw new AssertionFailedError("in the soft-RDMA VM, " + outcome + ": " + message
                    + "\n--- guest stack trace ---\n" + detail);
            }
        }
    }

    /** One host test per guest test, named {@code PREFIX: Class.method}, ending as it ended in the guest. */
    static List<DynamicTest> asTests(List<Case> cases, String prefix) {
        return cases.stream().map(c -> DynamicTest.dynamicTest(prefix + ": " + c.className().replaceFirst("^.*\\.", "")
            + "." + c.name(), c::replay)).toList();
    }

    static List<Case> read(Path reportsDir) throws Exception {
        List<Case> cases = new ArrayList<>();
        if (!Files.isDirectory(reportsDir)) {
            return cases;
        }
        List<Path> files;
        try (Stream<Path> list = Files.list(reportsDir)) {
            files = list.filter(p -> p.getFileName().toString().matches("TEST-.*\\.xml")).sorted().toList();
        }
        for (Path file : files) {
            NodeList testcases = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile())
                .getElementsByTagName("testcase");
            for (int i = 0; i < testcases.getLength(); i++) {
                cases.add(toCase((Element) testcases.item(i)));
            }
        }
        return cases;
    }

    private static Case toCase(Element testcase) throws IOException {
        String outcome = "passed";
        String message = "";
        String detail = "";
        for (String kind : new String[] {"failure", "error", "skipped"}) {
            NodeList found = testcase.getElementsByTagName(kind);
            if (found.getLength() > 0) {
                Element e = (Element) found.item(0);
                outcome = kind.equals("skipped") ? "skipped" : kind.equals("error") ? "error" : "failed";
                message = e.getAttribute("message");
                detail = e.getTextContent();
                break;
            }
        }
        return new Case(testcase.getAttribute("classname"), testcase.getAttribute("name"), outcome, message, detail);
    }
}
