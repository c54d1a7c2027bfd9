"""Go ``%#v`` rendering of the Kruise Rollouts types used as "bad values" in webhook messages."""

from __future__ import annotations

from kruise.rollouts.admission.gorender import (
    OBJECT_REF,
    POINTER,
    STEPS,
    TRAFFIC_ROUTINGS,
    Ptr,
    Scalar,
    Slice,
    StringMap,
    render,
)


def test_scalars_pointers_maps_and_slices() -> None:
    assert render(Scalar("string"), 'a"b').text == '"a\\"b"'
    assert render(Scalar("int32"), None).text == "0"
    assert render(Scalar("bool"), True).text == "true"
    assert render(Ptr("string"), None).text == "(*string)(nil)"
    assert render(Ptr("string"), "").text == f"(*string)({POINTER})"
    assert render(StringMap(), None).text == "map[string]string(nil)"
    assert render(StringMap(), {"b": "2", "a": "1"}).text == 'map[string]string{"a":"1", "b":"2"}'
    assert render(Slice("string", Scalar("string")), []).text == "[]string{}"
    assert render(OBJECT_REF, {}).text == 'v1beta1.ObjectRef{APIVersion:"", Kind:"", Name:""}'


def test_a_step_with_traffic_and_matches() -> None:
    step = {
        "traffic": "5%",
        "replicas": 1,
        "matches": [{"headers": [{"name": "a", "value": "b", "type": "Exact"}], "path": {"value": "/"}}],
        "pause": {"duration": 10},
    }
    expected = (
        "[]v1beta1.CanaryStep{v1beta1.CanaryStep{TrafficRoutingStrategy:v1beta1.TrafficRoutingStrategy{"
        "Traffic:(*string)(PTR), RequestHeaderModifier:(*v1beta1.HTTPHeaderFilter)(nil), "
        "Matches:[]v1beta1.HttpRouteMatch{v1beta1.HttpRouteMatch{"
        "Path:(*v1beta1.HTTPPathMatch)(PTR), "
        "Headers:[]v1beta1.HTTPHeaderMatch{v1beta1.HTTPHeaderMatch{"
        'Type:(*v1beta1.HeaderMatchType)(PTR), Name:"a", Value:"b"}}, '
        "QueryParams:[]v1beta1.HTTPQueryParamMatch(nil)}}}, "
        "Replicas:(*intstr.IntOrString)(PTR), Pause:v1beta1.RolloutPause{Duration:(*int32)(PTR)}}}"
    )
    assert render(STEPS, [step]).text == expected.replace("PTR", POINTER)


def test_traffic_routing_with_additional_params() -> None:
    ref = {"service": "s", "gracePeriodSeconds": 3, "customNetworkRefs": [], "additionalParams": {"k": "v"}}
    assert render(TRAFFIC_ROUTINGS, [ref]).text == (
        '[]v1beta1.TrafficRoutingRef{v1beta1.TrafficRoutingRef{Service:"s", GracePeriodSeconds:3, '
        "Ingress:(*v1beta1.IngressTrafficRouting)(nil), Gateway:(*v1beta1.GatewayTrafficRouting)(nil), "
        'CustomNetworkRefs:[]v1beta1.ObjectRef{}, AdditionalParams:map[string]string{"k":"v"}}}'
    )
