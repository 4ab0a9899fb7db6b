from django.urls import path

from suggestions.api.views import SuggestionView

urlpatterns = [path("suggestions", SuggestionView.as_view(), name="suggestions")]
