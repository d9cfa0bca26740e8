"""Tests of metrics.py: a metric's definition in words, from the case file's parameters when
given, else from metrics.json's type."""
import unittest

from .metrics import metric_definition, metric_of_type


class MetricDefinitionTest(unittest.TestCase):
    def test_the_case_file_gives_the_parameters(self):
        spec = {"type": "probe_error", "probe": "tip", "component": -1, "expected": 0.25, "relative": False}
        self.assertEqual(metric_definition({"name": "tip"}, spec),
                         "||u|(tip) − expected|, u the displacement after the last step, expected 0.25")
        spec = {"type": "mesh_reference_max_error", "reference_scene": "../../scenes/beam_fine.json", "relative": True}
        self.assertEqual(metric_definition({"name": "d"}, spec),
                         "largest |u − u_ref| at the nodes of the Newton solution of beam_fine (a finer mesh; u "
                         "interpolated there) ÷ the reference's largest displacement")

    def test_without_a_case_file_the_type_and_unit_say_it(self):
        self.assertEqual(metric_definition({"type": "reference_rms_error", "unit": "relative"}),
                         "RMS |x − x_ref| over the nodes, x_ref the Newton solution of the same scene ÷ the "
                         "reference's largest displacement")
        self.assertEqual(metric_definition({"name": "something_new"}), "—")

    def test_every_type_the_runner_writes_has_words(self):
        # The types of validation/validation_case.cpp's kMetricTypes (the cloth's among them).
        types = ["probe_error", "final_relative_residual", "max_penetration", "volume_ratio_error",
                 "reference_max_error", "reference_rms_error", "mesh_reference_max_error",
                 "mesh_reference_l2_error", "torsion_angle_deviation", "inverted_elements", "max_inverted_elements",
                 "rest_shape_error",
                 "edge_stretch_mean", "edge_stretch_max", "area_ratio_error", "lowest_point_error"]
        for kind in types:
            self.assertNotEqual(metric_definition({"type": kind}), "—", kind)
        self.assertEqual(metric_definition({"type": "lowest_point_error", "unit": "relative"}),
                         "|lowest point − Newton's lowest point| along −gravity after the last step ÷ the "
                         "reference's largest displacement")

    def test_a_metric_is_found_by_its_type_else_its_name(self):
        run = {"metrics": [{"name": "final_relative_residual", "value": 1},
                           {"name": "d", "type": "reference_max_error"}]}
        self.assertEqual(metric_of_type(run, ("reference_rms_error", "reference_max_error"))["name"], "d")
        self.assertEqual(metric_of_type(run, ("final_relative_residual",))["value"], 1)
        self.assertIsNone(metric_of_type(run, ("volume_ratio_error",)))


if __name__ == "__main__":
    unittest.main()
