Feature: Catalogs are never deleted by a plan

  Scenario: No catalog is deleted
    Given I have databricks_catalog defined
    When its actions metadata has delete
    Then it must fail
