Feature: Schemas are documented

  Scenario: Every schema has a comment
    Given I have databricks_schema defined
    Then it must contain comment
    And its value must not be null
