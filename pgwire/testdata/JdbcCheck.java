// JdbcCheck drives the server with pgJDBC; TestJDBC runs it and compares
// its output. Arguments: host port.
import java.sql.*;

public class JdbcCheck {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/asofsql?sslmode=disable";
        try (Connection c = DriverManager.getConnection(url, "jdbc", "")) {
            DatabaseMetaData md = c.getMetaData();
            System.out.println("server " + md.getDatabaseProductVersion());
            // Past prepareThreshold (5) the driver switches to a named statement.
            try (PreparedStatement ps = c.prepareStatement("select ?::int8 as n, ?::text as s, ?::timestamptz as ts, ?::float8 as f, ?::numeric(10,2) as d")) {
                for (int i = 0; i < 7; i++) {
                    ps.setLong(1, i);
                    ps.setString(2, "jdbc'" + i);
                    ps.setTimestamp(3, Timestamp.from(java.time.Instant.parse("2024-01-02T03:04:05.5Z")));
                    ps.setDouble(4, 0.1 * i);
                    ps.setBigDecimal(5, new java.math.BigDecimal("12.34"));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        System.out.println(rs.getLong("n") + " " + rs.getString("s") + " " + rs.getTimestamp("ts").toInstant() + " " + rs.getDouble("f") + " " + rs.getBigDecimal("d"));
                    }
                }
            }
            // A cursor: setFetchSize in a transaction fetches with MaxRows.
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.setFetchSize(2);
                try (ResultSet rs = st.executeQuery("select * from t")) {
                    int n = 0;
                    while (rs.next()) {
                        n++;
                        System.out.println("row " + rs.getInt("id") + " " + rs.getString("name") + " " + rs.getBigDecimal("price"));
                    }
                    System.out.println("rows " + n);
                }
            }
            c.commit();
            c.setAutoCommit(true);
            try (Statement st = c.createStatement()) {
                st.executeQuery("select * from nosuch");
            } catch (SQLException e) {
                System.out.println("error " + e.getSQLState() + " " + e.getMessage().replace("\n", " | "));
            }
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("show application_name")) {
                rs.next();
                System.out.println("application_name " + rs.getString(1));
            }
        }
    }
}
